// Every route in server.table() is in the inventory below; every rigd JSON route answers the one
// envelope ({success: true, data: {...}} or {success: false, error: {code, message, details}}),
// asked from a real VPN address (network namespace) over a real socket; the interface's routes keep
// their own shapes; every time in every JSON answer is ISO 8601 UTC ending in Z.
import test from 'tape';
import { closeServer } from '../helpers/closed.ts';
import { fixture } from '../helpers/fixture.ts';
import { createHosts, type Hosts, type HttpResponse } from '../helpers/netns.ts';
import { seedCapture } from '../helpers/seed-capture.ts';
import { startServer, userWithToken, type TestServer } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { INVENTORY } from './json-inventory.ts';

const VPN_HOST = 'vpn.rigs.internal';
let net: Hosts;
let s: TestServer;
let base = '';
let token = '';
let userId = '';
let captureId = 0;

const setup = fixture(async () => {
  net = await createHosts([{ name: 'rig', addr: '10.144.182.2', gw: '10.144.182.1' }]);
  s = await startServer({}, { host: '::' });
  base = `http://10.144.182.1:${s.server.info.port}`;
  ({ token, id: userId } = await userWithToken(s, 'ops'));
  const body = new URLSearchParams({ rig_serial: 'SN-7', gpsd_latitude: '47.37', gpsd_longitude: '8.54', local_ip: '192.168.8.20', software_version: '3.1.0', git_branch: 'main' }).toString();
  const report = await net.request('rig', { url: `${base}/api/v1/rigs/r7`, method: 'PUT', headers: { host: VPN_HOST, 'content-type': 'application/x-www-form-urlencoded' }, body });
  if (report.status !== 200) throw new Error(`the rig report answered ${report.status}: ${report.body}`);
  captureId = await seedCapture(s.app, tmpDir(), 'r7/a.sqlite', [{ name: 'frames', columns: [{ name: 'ts', type: 'TEXT' }], rows: [['x']] }]);
});

/** A valid request for each of rigd's own JSON routes (path with its parameters filled in). */
function validRequest(key: string): { method: string; path: string; body?: string } {
  const [method, path] = key.split(' ') as [string, string];
  const filled = path.replace('{id}', path.startsWith('/api/v1/captures') ? String(captureId) : 'r7');
  return { method, path: filled };
}

async function ask(method: string, path: string, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return net.request('rig', { url: `${base}${path}`, method, headers: { host: VPN_HOST, accept: 'application/json', authorization: token, ...headers } });
}

/** Every string in a JSON value that looks like a time, with where it is. */
function times(value: unknown, at = '$'): { at: string; text: string }[] {
  if (typeof value === 'string') return /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(value) ? [{ at, text: value }] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => times(v, `${at}[${i}]`));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => times(v, `${at}.${k}`));
  return [];
}

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;

function checkTimes(t: test.Test, what: string, body: unknown): void {
  const found = times(body);
  const bad = found.filter((f) => !ISO_Z.test(f.text));
  t.deepEqual(bad, [], `${what}: ${found.length} times, every one ISO 8601 UTC ending in Z`);
}

test('the inventory names every registered route, and only those', async (t) => {
  await setup();
  const registered = s.server.table().map((r) => `${r.method.toUpperCase()} ${r.path}`);
  const unlisted = registered.filter((k) => !(k in INVENTORY));
  t.deepEqual(unlisted, [], 'every registered route is in test/server/json-inventory.ts (classify a new route there)');
  const own = Object.entries(INVENTORY).filter(([, kind]) => kind === 'own-json').map(([k]) => k);
  t.deepEqual(own.filter((k) => !registered.includes(k)), [], "every rigd JSON route of the inventory is registered");
  t.ok(own.length >= 7, `${own.length} rigd JSON routes walked`);
});

test("every rigd JSON route answers {success: true, data: {...}} to a valid request", async (t) => {
  await setup();
  const own = s.server.table().filter((r) => INVENTORY[`${r.method.toUpperCase()} ${r.path}` as keyof typeof INVENTORY] === 'own-json');
  for (const route of own) {
    const key = `${route.method.toUpperCase()} ${route.path}`;
    const req = validRequest(key);
    // Ending a session: one of its own, so that the others keep theirs.
    const headers: Record<string, string> = req.method === 'DELETE' ? { authorization: (await s.app.sessions.login('ops', 'ops-password', '127.0.0.1')).token } : {};
    const res = await ask(req.method, req.path, headers);
    t.equal(res.status, 200, `${key}: 200`);
    t.match(String(res.headers['content-type']), /^application\/json; charset=utf-8$/, `${key}: JSON`);
    const body = JSON.parse(res.body) as Record<string, unknown>;
    t.deepEqual(Object.keys(body).sort(), ['data', 'success'], `${key}: the body is exactly {success, data}`);
    t.equal(body.success, true, `${key}: success is true`);
    t.ok(body.data !== null && typeof body.data === 'object' && !Array.isArray(body.data), `${key}: data is an object`);
    checkTimes(t, key, body);
  }
});

test('a rigd JSON route refusing a request answers {success: false, error: {code, message, details}}', async (t) => {
  await setup();
  const cases: [string, string, Record<string, string>, number, string][] = [
    ['GET', '/api/v1/rigs/nosuchrig', {}, 404, 'rig_not_found'],
    ['GET', '/api/v1/rigs?status=purple', {}, 400, ''],
    ['GET', '/api/v1/captures/999999', {}, 404, ''],
    ['GET', '/api/v1/captures', { authorization: 'not-a-token' }, 401, ''],
    ['GET', '/api/v1/rigs/r7/reports?since=yesterday', {}, 400, ''],
  ];
  for (const [method, path, headers, status, code] of cases) {
    const res = await ask(method, path, headers);
    const body = JSON.parse(res.body) as { success: unknown; error: { code: unknown; message: unknown; details: unknown } };
    t.equal(res.status, status, `${method} ${path}: ${status}`);
    t.deepEqual(Object.keys(body).sort(), ['error', 'success'], `${method} ${path}: exactly {success, error}`);
    t.equal(body.success, false, `${method} ${path}: success is false`);
    t.deepEqual(Object.keys(body.error).sort(), ['code', 'details', 'message'], `${method} ${path}: error has code, message, details`);
    t.ok(typeof body.error.message === 'string' && body.error.message.length > 0, `${method} ${path}: a message (${String(body.error.message)})`);
    if (code) t.equal(body.error.code, code, `${method} ${path}: code ${code}`);
  }
});

test("the interface's JSON routes keep the interface's shapes (no rigd envelope)", async (t) => {
  await setup();
  const login = await net.request('rig', { url: `${base}/api/v1/sessions`, method: 'POST', headers: { host: VPN_HOST, 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ login: 'ops', password: 'ops-password' }) });
  const session = JSON.parse(login.body) as { token: string; data: Record<string, unknown> };
  t.deepEqual(Object.keys(session).sort(), ['data', 'token'], 'POST /api/v1/sessions: {token, data}');
  t.deepEqual(Object.keys(session.data).sort(), ['success', 'token', 'user'], 'its data: success, token, user');
  const upload = await ask('GET', '/api/v1/rigs/upload?key=r7/b.sqlite&size=10');
  t.deepEqual(Object.keys(JSON.parse(upload.body)).sort(), ['exists', 'id', 'size', 'success', 'url'], 'GET /api/v1/rigs/upload: the reservation, flat');
  const put = await net.request('rig', { url: `${base}/api/v1/users/${userId}`, method: 'PUT', headers: { host: VPN_HOST, 'content-type': 'application/json', authorization: token }, body: JSON.stringify({ user: { rig_ui_settings: { b: 1 } } }) });
  const settings = JSON.parse(put.body) as { token: string; data: { user: Record<string, unknown> } };
  t.deepEqual(Object.keys(settings).sort(), ['data', 'token'], 'PUT /api/v1/users/:id: {token, data}');
  t.deepEqual(Object.keys(settings.data.user).sort(), ['email', 'rigUISettings', 'username'], 'its data.user names rigUISettings as the interface does');
  const report = await net.request('rig', { url: `${base}/api/v1/rigs/r7`, method: 'PUT', headers: { host: VPN_HOST, 'content-type': 'application/x-www-form-urlencoded' }, body: 'rig_serial=SN-7' });
  t.deepEqual([report.status, report.headers['content-type'], report.body], [200, 'text/plain; charset=utf-8', 'Ok'], 'PUT /api/v1/rigs/:id: still Ok as text');
  checkTimes(t, 'POST /api/v1/sessions', session);
});

test('the /rigs page: times in UTC ending in Z, no offset (its titles included)', async (t) => {
  await setup();
  const page = await net.request('rig', { url: `${base}/rigs`, headers: { host: VPN_HOST, accept: 'text/html' } });
  t.equal(page.status, 200, '/rigs: 200');
  const stamps = [...page.body.matchAll(/(?:datetime|title)="(\d{4}-\d{2}-\d{2}T[^"]*)"/g)].map((m) => m[1] as string);
  t.ok(stamps.length >= 2, `${stamps.length} times on the page`);
  t.deepEqual(stamps.filter((x) => !ISO_Z.test(x)), [], 'every time in a datetime or title attribute ends in Z');
  t.notOk(/[+-]\d{2}:\d{2}"/.test(page.body), 'no offset time in an attribute');
});

test('the OpenAPI document describes the envelope for every rigd JSON route under /api/', async (t) => {
  await setup();
  const doc = JSON.parse((await ask('GET', '/api/v1/openapi.json')).body) as { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: { required?: string[]; properties?: Record<string, unknown> } }> }> }>> };
  const own = Object.entries(INVENTORY).filter(([k, kind]) => kind === 'own-json' && k.split(' ')[1]!.startsWith('/api/'));
  for (const [key] of own) {
    const [method, path] = key.split(' ') as [string, string];
    const schema = doc.paths[path]?.[method.toLowerCase()]?.responses['200']?.content?.['application/json']?.schema;
    t.deepEqual(Object.keys(schema?.properties ?? {}).sort(), ['data', 'success'], `${key}: the document's answer is {success, data}`);
    t.deepEqual([...(schema?.required ?? [])].sort(), ['data', 'success'], `${key}: both required`);
  }
});

test('an empty list names the filters it was asked with; a list with items says empty: null', async (t) => {
  await setup();
  const cases: [string, string | null, Record<string, string>][] = [
    ['/api/v1/rigs?status=offline', 'no rigs with status offline', { status: 'offline' }],
    ['/api/v1/rigs?status=online', null, { status: 'online' }],
    ['/api/v1/captures?rig=r9&state=failed', 'no captures of rig r9 in state failed', { rig: 'r9', state: 'failed' }],
    ['/api/v1/captures?project=p1', 'no captures in project p1', { project: 'p1' }],
    ['/api/v1/captures', null, {}],
    ['/api/v1/rigs/r7/reports?since=2099-01-01T00:00:00Z', 'no reports of rig r7 since 2099-01-01T00:00:00.000Z', { since: '2099-01-01T00:00:00.000Z' }],
    ['/api/v1/rigs/r7/reports?until=2000-01-01T00:00:00%2B02:00', 'no reports of rig r7 until 1999-12-31T22:00:00.000Z', { until: '1999-12-31T22:00:00.000Z' }],
    ['/api/v1/rigs/r7/reports', null, {}],
  ];
  for (const [path, empty, filters] of cases) {
    const res = await ask('GET', path);
    const data = (JSON.parse(res.body) as { data: { empty: unknown; filters: unknown } }).data;
    t.equal(res.status, 200, `${path}: 200`);
    t.equal(data.empty, empty, `${path}: empty ${JSON.stringify(empty)}`);
    t.deepEqual(data.filters, filters, `${path}: the filters as asked (times in UTC ending in Z)`);
  }
});

test('teardown', async (t) => {
  await setup();
  await closeServer(t, s);
  await net.destroy();
});
