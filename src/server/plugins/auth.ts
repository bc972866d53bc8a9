import Cookie from '@hapi/cookie';
import type { Request, ResponseToolkit, RouteOptions, Server } from '@hapi/hapi';
import { Unauthenticated } from '../../errors.ts';
import { userCredentials } from '../credentials.ts';
import type { App } from '../../services/app.ts';
import type { Authenticated } from '../../services/auth/sessions.ts';

export const TOKEN_COOKIE = 'token';
export const SESSION_COOKIE = '_service_pm_session';

/**
 * The presented token: `Authorization: <token>` (the seed), `Authorization: Bearer <token>`,
 * else the `token` cookie. Null when none is presented; an Authorization header or a token cookie
 * given more than once is refused (401 invalid_token saying so), not taken for one of them or none.
 */
export function presentedToken(request: Request): string | null {
  // Node keeps only the first of repeated Authorization headers: which one was meant cannot be told.
  if (headerLines(request, 'authorization') > 1) {
    throw new Unauthenticated('invalid_token', 'the Authorization header is given more than once: send one token');
  }
  const header = request.headers.authorization;
  if (typeof header === 'string' && header.trim() !== '') {
    const value = header.trim();
    const bearer = /^Bearer\s+(\S+)$/i.exec(value);
    if (bearer) return bearer[1];
    if (/\s/.test(value)) throw new Unauthenticated('invalid_token', 'the Authorization header must hold the token, or "Bearer <token>"');
    return value;
  }
  const cookie = (request.state as Record<string, unknown> | null)?.[TOKEN_COOKIE];
  // Given twice (`token=a; token=b`), the cookie parses to a list: which one was meant cannot be told.
  if (Array.isArray(cookie)) throw new Unauthenticated('invalid_token', 'the token cookie is given more than once: send one token cookie, or the token in the Authorization header');
  return typeof cookie === 'string' && cookie !== '' ? cookie : null;
}

/**
 * How many lines of header `name` (lower case) the request carried. A request made in process
 * (server.inject) has no raw header lines: one header value is one line.
 */
function headerLines(request: Request, name: string): number {
  const raw = request.raw.req.rawHeaders as string[] | undefined;
  if (raw === undefined) return request.headers[name] === undefined ? 0 : 1;
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) n++;
  return n;
}

/** The operator login page (page.login): where the fleet pages send a browser without a session. */
export const LOGIN_PATH = '/login';

/**
 * The auth of a fleet page (/rigs, /rigs/{id}, /map, /map/rigs.json): none, or with page.login the
 * `_service_pm_session` cookie (an operator's session). `json`: answer 401 instead of sending the
 * browser to the login page (the map's markers, fetched by script).
 */
export function pageAuth(config: { page: { login: boolean } }, opts: { json?: boolean } = {}): Pick<RouteOptions, 'auth' | 'plugins'> {
  if (!config.page.login) return { auth: false };
  return { auth: { strategy: 'session-cookie', mode: 'required' }, ...(opts.json ? { plugins: { cookie: { redirectTo: false } } } : {}) };
}

/**
 * Strategies: 'token' (API tokens from the header or cookie) and the sealed
 * `_service_pm_session` cookie the seed's endpoints and the login page set. The cookie holds the
 * session's id and user id; each request checks the session still exists (a revoked token, a
 * logout, a removed user or a new password ends it) and has not expired. Without one, a page
 * behind it sends the browser to the login page (`?next=` the page asked for).
 */
export async function registerAuth(server: Server, app: App, cookieSecret: string): Promise<void> {
  const secure = app.config.server.secure_cookies;
  server.state(TOKEN_COOKIE, {
    path: '/api',
    isHttpOnly: true,
    isSameSite: 'Lax',
    isSecure: secure,
    encoding: 'none',
    strictHeader: true,
    ignoreErrors: true,
    clearInvalid: false,
  });

  await server.register(Cookie);
  server.auth.strategy('session-cookie', 'cookie', {
    cookie: {
      name: SESSION_COOKIE,
      password: cookieSecret,
      path: '/',
      isSecure: secure,
      isHttpOnly: true,
      isSameSite: 'Lax',
      clearInvalid: true,
    },
    redirectTo: LOGIN_PATH,
    appendNext: 'next',
    validate: async (_request: Request, cookie: object) => {
      const { sid, uid } = cookie as { sid?: unknown; uid?: unknown };
      const found = await app.sessions.fromCookie(sid, uid);
      return found ? { isValid: true, credentials: { user: found.user, session: found.session } } : { isValid: false };
    },
  });

  server.auth.scheme('rigd-token', () => ({
    authenticate: async (request, h) => {
      const token = presentedToken(request);
      if (!token) throw new Unauthenticated('missing_token', 'an access token is required (Authorization header or token cookie)');
      const auth = await app.sessions.authenticate(token);
      return h.authenticated({ credentials: userCredentials(auth) });
    },
  }));
  server.auth.strategy('token', 'rigd-token');
}

/** Sets the seed's two cookies for an authenticated session. */
export function setSessionCookies(request: Request, h: ResponseToolkit, auth: Authenticated): void {
  const ttl = Math.max(0, auth.session.expires_at.getTime() - Date.now());
  h.state(TOKEN_COOKIE, auth.token, { ttl });
  request.cookieAuth.set({ sid: auth.session.id, uid: auth.user.id });
}
