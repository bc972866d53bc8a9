import type { Request, Server } from '@hapi/hapi';
import { Unauthenticated } from '../../errors.ts';
import type { App } from '../../services/app.ts';
import type { Authenticated } from '../../services/auth/sessions.ts';
import { secretsEqual } from '../../services/auth/tokens.ts';
import { presentedToken } from './auth.ts';

/** Credentials of a request authorised by `ingest.webhook_token` (storage's notifications), not by a user. */
export interface WebhookCredentials {
  webhook: true;
}

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
        return h.authenticated({ credentials: { webhook: true } satisfies WebhookCredentials as never });
      }
      const auth = await app.sessions.authenticate(token);
      return h.authenticated({ credentials: auth as never });
    },
  }));
  server.auth.strategy('webhook', 'rigd-webhook');
}

/** The user behind a request of strategy 'webhook', or null when the webhook token authorised it. */
export function webhookUser(request: Request): Authenticated | null {
  const credentials = request.auth.credentials as unknown as Authenticated | WebhookCredentials;
  return 'webhook' in credentials ? null : credentials;
}
