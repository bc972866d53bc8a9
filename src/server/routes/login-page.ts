import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { Throttled, Unauthenticated } from '../../errors.ts';
import type { App } from '../../services/app.ts';
import { LOGIN_PATH } from '../plugins/auth.ts';

/** Where the login page sends a browser by default. */
const HOME = '/rigs';
/** A local path to go back to after the login: one slash, then no second one (never another site). */
const NEXT = /^\/(?![/\\])[A-Za-z0-9/._~%?=&+-]{0,200}$/;

const form = Joi.object({
  login: Joi.string().allow('').max(254).default(''),
  password: Joi.string().allow('').max(1024).default(''),
  next: Joi.string().allow('').max(256).default(''),
}).unknown(true);

function nextOf(value: unknown): string {
  return typeof value === 'string' && NEXT.test(value) ? value : HOME;
}

function page(h: ResponseToolkit, model: { next: string; login?: string; error?: string }, status = 200) {
  return h.view('login', model).type('text/html; charset=utf-8').code(status).header('cache-control', 'no-store');
}

/**
 * A form posted from a page of another origin is refused (the session cookie is SameSite=Lax, and
 * a login form must not log a browser in as someone else either): Origin, when sent, must name
 * the Host the form was posted to.
 */
function sameOrigin(request: Request): boolean {
  const origin = request.headers.origin;
  if (typeof origin !== 'string' || origin === '' || origin === 'null') return origin !== 'null';
  try {
    return new URL(origin).host.toLowerCase() === String(request.headers.host ?? '').toLowerCase();
  } catch {
    return false;
  }
}

/**
 * GET /login (the form), POST /login (checks the password like POST /api/v1/sessions, throttle and
 * audit log included, then sets the `_service_pm_session` cookie and goes back to `next`), POST
 * /logout (ends the session, on record). Only with page.login; for clients in page.allow.
 */
export function loginPageRoutes(app: App): ServerRoute[] {
  if (!app.config.page.login) return [];
  const html = { vpn: 'viewer' as const, errorFormat: 'html' as const };
  return [
    {
      method: 'GET',
      path: LOGIN_PATH,
      options: {
        auth: { strategy: 'session-cookie', mode: 'try' },
        plugins: { cookie: { redirectTo: false } },
        app: html,
        validate: { query: Joi.object({ next: Joi.string().allow('').max(256) }).unknown(true) },
        handler: (request, h) => {
          const next = nextOf(request.query.next);
          if (request.auth.isAuthenticated) return h.redirect(next);
          return page(h, { next });
        },
      },
    },
    {
      method: 'POST',
      path: LOGIN_PATH,
      options: {
        auth: false,
        app: html,
        payload: { allow: 'application/x-www-form-urlencoded', maxBytes: 4096 },
        validate: { payload: form },
        handler: async (request, h) => {
          const body = request.payload as { login: string; password: string; next: string };
          const next = nextOf(body.next);
          if (!sameOrigin(request)) return page(h, { next, error: 'This form was sent from another site; open the login page again.' }, 403);
          if (body.login === '' || body.password === '') return page(h, { next, login: body.login, error: 'Give a user name and a password.' }, 400);
          const client = request.app.client;
          if (!client) return page(h, { next, error: 'The client address is unknown.' }, 400);
          try {
            const { user, sessionId } = await app.sessions.login(body.login, body.password, client.toString());
            request.cookieAuth.set({ sid: sessionId, uid: Number(user.id) });
            return h.redirect(next).code(303);
          } catch (err) {
            // The form again, saying why (the API's JSON errors are for scripts).
            if (err instanceof Unauthenticated) return page(h, { next, login: body.login, error: 'Wrong user name or password.' }, 401);
            if (err instanceof Throttled) return page(h, { next, login: body.login, error: `${err.message}.` }, 429).header('retry-after', String(err.retryAfterS));
            throw err;
          }
        },
      },
    },
    {
      method: 'POST',
      path: '/logout',
      options: {
        auth: { strategy: 'session-cookie', mode: 'try' },
        plugins: { cookie: { redirectTo: false } },
        app: html,
        payload: { allow: ['application/x-www-form-urlencoded'], maxBytes: 1024, failAction: 'ignore' },
        handler: async (request, h) => {
          const { session, user } = request.auth.credentials ?? {};
          if (request.auth.isAuthenticated && session && user && sameOrigin(request)) {
            await app.sessions.logout(session.id, { username: user.username, client: request.app.client?.toString() ?? null });
          }
          request.cookieAuth.clear();
          return h.redirect(LOGIN_PATH).code(303);
        },
      },
    },
  ];
}
