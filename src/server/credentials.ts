/**
 * What request.auth.credentials holds, typed once for every route: strategy 'token' (and 'webhook'
 * with a user token) authenticates a user session; strategy 'webhook' with ingest.webhook_token
 * authenticates no user. Strategies build credentials with {@link userCredentials} /
 * {@link WEBHOOK_CREDENTIALS}; handlers read them with {@link authOf} / {@link webhookUser}.
 */
import type { AuthCredentials, Request } from '@hapi/hapi';
import type { Session, User } from '../db/models/index.ts';
import { Unauthenticated } from '../errors.ts';
import type { Authenticated } from '../services/auth/sessions.ts';

declare module '@hapi/hapi' {
  // The signed-in user (hapi's own `credentials.user` slot).
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface UserCredentials extends User {}
  interface AuthCredentials {
    /** The session the token belongs to. */
    session?: Session;
    /** The token presented. */
    token?: string;
    /** Set when ingest.webhook_token authorised the request (then there is no user). */
    webhook?: true;
  }
}

/** The credentials of an authenticated session. */
export function userCredentials(auth: Authenticated): AuthCredentials {
  return { user: auth.user, session: auth.session, token: auth.token };
}

/** The credentials of a request authorised by ingest.webhook_token. */
export const WEBHOOK_CREDENTIALS: AuthCredentials = { webhook: true };

/** The authenticated user, session and token of a request behind a user strategy. */
export function authOf(request: Request): Authenticated {
  const { user, session, token } = request.auth.credentials;
  // Unreachable behind 'token': hapi calls no handler without credentials.
  if (!user || !session || token === undefined) throw new Unauthenticated('missing_token', 'this request carries no user session');
  return { user, session, token };
}

/** The user behind a request of strategy 'webhook', or null when the webhook token authorised it. */
export function webhookUser(request: Request): Authenticated | null {
  return request.auth.credentials.webhook ? null : authOf(request);
}
