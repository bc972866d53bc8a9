// The full header set of a few seed routes (rig-service-interface.md), recorded from the server as
// it answered before its extensions moved onto hapi's own points (routes.security, response.etag):
// every header name, and its value where it is constant; values that change per request are
// checked for their format here and stand in the expectation as <...>.
// RIGD_TEST_PRINT_HEADER_SETS=1 prints the sets instead of comparing them.
import test from 'tape';
import { weakEtag } from '../../src/services/weak-etag.ts';
import { http, type HttpResponse } from '../helpers/http.ts';
import { startServer, userWithToken } from '../helpers/server.ts';

const REQUEST_ID = 'header-set-1';

/** The session's 30 days less the whole seconds since the login (a busy machine may take seconds between the two), or the number as it came. */
function sessionLeft(maxAge: number): string {
  const gone = 30 * 86400 - maxAge;
  return gone >= 1 && gone <= 600 ? '<30 days less the seconds since login>' : String(maxAge);
}

/** The headers of one response, sorted by name; per-request values replaced by their format. */
function headerSet(t: test.Test, res: HttpResponse): string[] {
  const out: string[] = [];
  for (const [name, raw] of Object.entries(res.headers)) {
    if (raw === undefined) continue;
    for (const value of Array.isArray(raw) ? raw : [raw]) {
      let shown = value;
      if (name === 'date') shown = Number.isNaN(Date.parse(value)) ? `bad date ${value}` : '<http-date>';
      else if (name === 'x-runtime') shown = /^\d+\.\d{6}$/.test(value) ? '<seconds>' : `bad runtime ${value}`;
      else if (name === 'content-length') shown = Number(value) === Buffer.byteLength(res.text) ? '<body length>' : `bad length ${value}`;
      else if (name === 'etag') shown = value === weakEtag(res.text) || (res.status === 304 && /^W\/"[0-9a-f]{32}"$/.test(value)) ? '<weak sha-256>' : `bad etag ${value}`;
      else if (name === 'set-cookie') shown = value.replace(/=[^;]*/, '=<value>').replace(/expires=[^;]*/i, 'expires=<http-date>').replace(/Max-Age=(\d+)/, (_, n: string) => `Max-Age=${sessionLeft(Number(n))}`);
      out.push(`${name}: ${shown}`);
    }
  }
  t.ok(out.length > 0, 'headers read');
  return out.sort();
}

/** HTML pages only (added after the recording; src/server/content-security-policy.ts). */
const CSP = "content-security-policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'";

const SECURITY = [
  'referrer-policy: strict-origin-when-cross-origin',
  'x-content-type-options: nosniff',
  'x-download-options: noopen',
  'x-frame-options: SAMEORIGIN',
  'x-permitted-cross-domain-policies: none',
  'x-xss-protection: 0',
];
const COMMON = ['connection: keep-alive', 'date: <http-date>', 'keep-alive: timeout=5', `x-request-id: ${REQUEST_ID}`, 'x-runtime: <seconds>', ...SECURITY];
const sorted = (lines: string[]) => [...lines].sort();

const EXPECTED: Record<string, string[]> = {
  'POST /api/v1/sessions 200 -> 200': sorted([
    ...COMMON,
    'cache-control: max-age=0, private, must-revalidate',
    'content-length: <body length>',
    'content-type: application/json; charset=utf-8',
    'etag: <weak sha-256>',
    'vary: Origin',
  ]),
  'POST /api/v1/sessions 401 -> 401': sorted([
    ...COMMON,
    'cache-control: no-cache',
    'content-length: <body length>',
    'content-type: application/json; charset=utf-8',
    'vary: Origin',
  ]),
  'PUT /api/v1/users/:id 200 -> 200': sorted([
    ...COMMON,
    'cache-control: max-age=0, private, must-revalidate',
    'content-length: <body length>',
    'content-type: application/json; charset=utf-8',
    'etag: <weak sha-256>',
    'set-cookie: _service_pm_session=<value>; HttpOnly; SameSite=Lax; Path=/',
    'set-cookie: token=<value>; Max-Age=<30 days less the seconds since login>; expires=<http-date>; HttpOnly; SameSite=Lax; Path=/api',
    'vary: Accept, Origin',
  ]),
  'GET /api/v1/rigs/upload 403 (not on the VPN) -> 403': sorted([
    ...COMMON,
    'cache-control: no-cache',
    'content-length: <body length>',
    CSP,
    'content-type: text/html; charset=UTF-8',
  ]),
  'GET /nowhere 404 -> 404': sorted([
    ...COMMON,
    'cache-control: no-cache',
    'content-length: <body length>',
    'content-type: application/json; charset=utf-8',
    'vary: Origin',
  ]),
  'GET JSON 200 -> 200': sorted([
    ...COMMON,
    'accept-ranges: bytes',
    'cache-control: max-age=0, private, must-revalidate',
    'content-length: <body length>',
    'content-type: application/json; charset=utf-8',
    'etag: <weak sha-256>',
    'vary: Origin',
  ]),
  'GET JSON 304 -> 304': sorted([
    ...COMMON,
    'cache-control: max-age=0, private, must-revalidate',
    'content-type: application/json; charset=utf-8',
    'etag: <weak sha-256>',
    'vary: Origin',
  ]),
  'GET /rigs 200 -> 200': sorted([
    ...COMMON,
    'accept-ranges: bytes',
    'cache-control: no-cache',
    'content-length: <body length>',
    CSP,
    'content-type: text/html; charset=utf-8',
  ]),
};

test('full header sets of seed routes', async (t) => {
  const s = await startServer();
  try {
    s.server.route({ method: 'GET', path: '/api/v1/test-echo', options: { auth: false, handler: () => ({ hello: 'world' }) } });
    const user = await userWithToken(s, 'headers');
    const headers = { 'x-request-id': REQUEST_ID };
    const answers: Record<string, HttpResponse> = {};
    answers['POST /api/v1/sessions 200'] = await http(`${s.url}/api/v1/sessions`, { json: { login: 'headers', password: user.password }, headers });
    answers['POST /api/v1/sessions 401'] = await http(`${s.url}/api/v1/sessions`, { json: { login: 'headers', password: 'wrong' }, headers });
    answers['PUT /api/v1/users/:id 200'] = await http(`${s.url}/api/v1/users/${user.id}`, {
      method: 'PUT',
      json: { user: { id: Number(user.id), rig_ui_settings: { button: { x: 0.5, y: 0.25 } } } },
      headers: { ...headers, authorization: user.token },
    });
    answers['GET /api/v1/rigs/upload 403 (not on the VPN)'] = await http(`${s.url}/api/v1/rigs/upload?key=a.sqlite&size=1`, { headers });
    answers['GET /nowhere 404'] = await http(`${s.url}/nowhere`, { headers });
    const echo = await http(`${s.url}/api/v1/test-echo`, { headers });
    answers['GET JSON 200'] = echo;
    answers['GET JSON 304'] = await http(`${s.url}/api/v1/test-echo`, { headers: { ...headers, 'if-none-match': String(echo.headers['etag']) } });
    answers['GET /rigs 200'] = await http(`${s.url}/rigs`, { headers: { ...headers, cookie: `token=${user.token}` } });
    const sets = Object.fromEntries(Object.entries(answers).map(([name, res]) => [`${name} -> ${res.status}`, headerSet(t, res)]));
    if (process.env.RIGD_TEST_PRINT_HEADER_SETS) console.log(JSON.stringify(sets, null, 2));
    else t.deepEqual(sets, EXPECTED, 'the same header sets as recorded');
  } finally {
    await s.close();
  }
});
