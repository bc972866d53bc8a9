import type { Server } from '@hapi/hapi';
import { Unauthenticated } from '../../errors.ts';
import type { App } from '../../services/app.ts';
import { secretsEqual } from '../../services/auth/tokens.ts';
import { userCredentials, WEBHOOK_CREDENTIALS } from '../credentials.ts';
import { presentedToken } from './auth.ts';

/**
 * Strategy 'webhook': a user token exactly as strategy 'token' takes it (raw Authorization, Bearer,
 * or the token cookie), or `ingest.webhook_token` in the Authorization header (MinIO sends
 * `Bearer <token>`), compared in constant time. The webhook token is never looked up as a session.
 */
export function registerWebhookAuth(server: Server, app: App): void {
  const webhookToken = app.config.ingest.webhook_token;
  server.auth.scheme('rigd-webhook', () => ({
    authenticate: async (request, h) => {
      const token = presentedToken(request);
      if (!token) throw new Unauthenticated('missing_token', 'an access token is required (Authorization header or token cookie)');
      const fromHeader = typeof request.headers.authorization === 'string' && request.headers.authorization.trim() !== '';
      if (webhookToken !== '' && fromHeader && secretsEqual(token, webhookToken)) {
        return h.authenticated({ credentials: WEBHOOK_CREDENTIALS });
      }
      const auth = await app.sessions.authenticate(token);
      return h.authenticated({ credentials: userCredentials(auth) });
    },
  }));
  server.auth.strategy('webhook', 'rigd-webhook');
}
