// What buggy or hostile clients send to the HTTP edge, over real sockets: rigs from VPN addresses
// (network namespaces), users from loopback. Every answer is a 4xx that says what is wrong (never a
// 500), and what was stored before is still there, unchanged, afterwards.
import { existsSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import test from 'tape';
import { closeServer } from '../helpers/closed.ts';
import { fixture } from '../helpers/fixture.ts';
import { http } from '../helpers/http.ts';
import { createHosts, type Hosts, type HttpRequest } from '../helpers/netns.ts';
import { startServer, userWithToken, type TestServer } from '../helpers/server.ts';

const VPN_HOST = 'vpn.rigs.internal';
const FORM = 'application/x-www-form-urlencoded';
const REPORT = 'rig_serial=SN-1&gpsd_latitude=47.5&gpsd_longitude=8.5&local_ip=192.168.1.20&software_version=3.1.0&git_branch=main';
let net: Hosts;
let s: TestServer;
let base = '';
let ana = { id: '', token: '', password: '' };

const setup = fixture(async () => {
  net = await createHosts([{ name: 'rig', addr: '10.144.118.2', gw: '10.144.118.1' }]);
  s = await startServer({}, { host: '::' });
  base = `http://10.144.118.1:${s.server.info.port}`;
  ana = await userWithToken(s, 'ana');
  // Stored before anything hostile arrives: checked unchanged at the end.
  const first = await net.request('rig', { url: `${base}/api/v1/rigs/rig-1`, method: 'PUT', headers: { host: VPN_HOST, 'content-type': FORM }, body: REPORT });
  if (first.status !== 200) throw new Error(`the first report failed: ${first.status} ${first.body}`);
});

function rigReq(method: string, path: string, body?: string, type = FORM): HttpRequest {
  return { url: `${base}${path}`, method, headers: { host: VPN_HOST, ...(body === undefined ? {} : { 'content-type': type }) }, ...(body === undefined ? {} : { body }) };
}

async function stored(): Promise<unknown[]> {
  const reports = await s.app.db.models.RigReport.findAll({ order: [['id', 'ASC']] });
  const rigs = await s.app.db.models.Rig.findAll({ order: [['id', 'ASC']] });
  return [rigs.map((r) => [r.get('id'), r.get('serial'), r.get('vpn_address')]), reports.map((r) => [r.get('rig_id'), r.get('serial'), r.get('branch')])];
}

test('a NUL character in a login, a query parameter or a report field: 400 naming it, never a 500', async (t) => {
  await setup();
  const before = await stored();
  for (const key of ['login', 'email', 'username']) {
    const res = await http(`${s.url}/api/v1/sessions`, { json: { [key]: 'an\u0000a', password: 'x' } });
    t.equal(res.status, 400, `POST /api/v1/sessions, ${key} with a NUL: 400`);
    t.deepEqual(res.json().error?.code, 'invalid_params', `${key}: invalid_params`);
    t.equal(res.json().error?.message, `field ${key} must not contain a NUL character`, `${key}: the message names the field`);
  }
  const pw = await http(`${s.url}/api/v1/sessions`, { json: { login: 'ana', password: 'a\u0000' } });
  t.equal(pw.status, 400, 'a password with a NUL: 400');
  for (const q of ['rig=a%00b', 'project=a%00b']) {
    const res = await http(`${s.url}/api/v1/captures?${q}`, { headers: { authorization: ana.token } });
    t.equal(res.status, 400, `GET /api/v1/captures?${q}: 400`);
    t.match(String(res.json().error?.message), /^query parameter (rig|project) must not contain a NUL character$/, `${q}: says which parameter`);
  }
  const report = await net.request('rig', rigReq('PUT', '/api/v1/rigs/rig-1', 'rig_serial=SN-2&git_branch=a%00b'));
  t.deepEqual([report.status, report.headers['content-type'], report.body], [400, 'text/plain; charset=utf-8', 'field git_branch must not contain a NUL character\n'], 'a report with a NUL: 400 text/plain, one line');
  const json = await net.request('rig', rigReq('PUT', '/api/v1/rigs/rig-1', JSON.stringify({ rig_serial: 'SN\u00002' }), 'application/json'));
  t.deepEqual([json.status, json.body], [400, 'field rig_serial must not contain a NUL character\n'], 'the same in a JSON report');
  const object = await net.request('rig', rigReq('GET', '/captures/a%00b'));
  t.deepEqual([object.status, object.headers['content-type']], [400, 'application/xml'], "an object key with a NUL: the embedded store's own 400, in S3's XML");
  t.match(object.body, /<Code>InvalidObjectName<\/Code>/, 'InvalidObjectName');
  const ok = await http(`${s.url}/api/v1/sessions`, { json: { login: 'ana', password: ana.password } });
  t.equal(ok.status, 200, 'ana still logs in');
  t.deepEqual(await stored(), before, 'nothing stored changed');
});

test('bytes that are not UTF-8 in a report field, a query parameter or a login: 400 saying so, nothing stored as U+FFFD', async (t) => {
  await setup();
  const before = await stored();
  const why = 'must be UTF-8 text (it holds bytes that are not)';
  const [escaped, raw] = await net.requestAll('rig', [
    rigReq('PUT', '/api/v1/rigs/rig-1', 'rig_serial=SN%ff%fe&git_branch=main'),
    { ...rigReq('PUT', '/api/v1/rigs/rig-1'), headers: { host: VPN_HOST, 'content-type': FORM }, body: Buffer.concat([Buffer.from('rig_serial=SN-1&git_branch=ma'), Buffer.from([0xc3, 0x28])]) },
  ]);
  t.deepEqual([escaped!.status, escaped!.body], [400, `field rig_serial ${why}\n`], 'a report with %ff%fe: 400, one line of text');
  t.deepEqual([raw!.status, raw!.body], [400, `field git_branch ${why}\n`], 'a report with a raw byte that is not UTF-8: 400');
  const upload = await net.request('rig', rigReq('GET', '/api/v1/rigs/upload?key=logs%2Fa%ffb.log&size=10'));
  t.equal(upload.status, 400, 'an upload key with %ff: 400');
  t.equal(JSON.parse(upload.body).error?.message, `query parameter key ${why}`, 'says which parameter');
  const login = await http(`${s.url}/api/v1/sessions`, { body: Buffer.concat([Buffer.from('{"login":"an'), Buffer.from([0xff]), Buffer.from('a","password":"x"}')]), headers: { 'content-type': 'application/json' } });
  t.deepEqual([login.status, login.json().error?.message], [400, `field login ${why}`], 'a login with a byte that is not UTF-8: 400');
  t.deepEqual(await stored(), before, 'nothing stored changed');
  t.equal(await s.app.db.models.Upload.count({ where: { key: 'logs/a\uFFFDb.log' } }), 0, 'no reservation under a mangled key');
});

test('rig UI settings holding a number JSON cannot store (1e999): 400, the stored settings unchanged', async (t) => {
  await setup();
  const put = (body: string) => http(`${s.url}/api/v1/users/${ana.id}`, { method: 'PUT', headers: { authorization: ana.token, 'content-type': 'application/json' }, body });
  const first = await put('{"user":{"rig_ui_settings":{"button":{"x":1.5,"y":2}}}}');
  t.equal(first.status, 200, 'settings stored');
  for (const body of ['{"user":{"rig_ui_settings":1e999}}', '{"user":{"rig_ui_settings":{"button":{"x":-1e400,"y":2}}}}', '{"user":{"rig_ui_settings":[1,2,1e309]}}']) {
    const res = await put(body);
    t.equal(res.status, 400, `${body}: 400`);
    t.match(String(res.json().error?.message), /^user\.rig_ui_settings holds a number too large for JSON/, `says what is wrong: ${res.json().error?.message}`);
  }
  const user = await s.app.db.models.User.findByPk(Number(ana.id));
  t.equal(user?.get('rig_ui_settings'), '{"button":{"x":1.5,"y":2}}', 'the stored settings are the ones stored before');
});

test('a method a path does not take: 405 with Allow, in the JSON error format; an unknown path stays 404', async (t) => {
  await setup();
  const before = await stored();
  const cases: [string, string, string][] = [
    ['POST', '/api/v1/rigs/rig-1', 'GET, HEAD, PUT'],
    ['DELETE', '/api/v1/rigs/rig-1', 'GET, HEAD, PUT'],
    ['PATCH', '/api/v1/rigs/rig-1', 'GET, HEAD, PUT'],
    ['OPTIONS', '/api/v1/rigs/rig-1', 'GET, HEAD, PUT'],
    ['POST', '/api/v1/rigs/upload?key=a&size=1', 'GET, HEAD, PUT'],
  ];
  const res = await net.requestAll('rig', cases.map(([m, p]) => rigReq(m, p, m === 'OPTIONS' ? undefined : 'rig_serial=x')));
  cases.forEach(([m, p, allow], i) => {
    const r = res[i]!;
    t.equal(r.status, 405, `${m} ${p}: 405`);
    t.equal(r.headers['allow'], allow, `${m} ${p}: Allow: ${allow}`);
    t.equal(r.headers['content-type'], 'application/json; charset=utf-8', `${m} ${p}: JSON`);
    const body = JSON.parse(r.body);
    t.deepEqual([body.success, body.error.code, body.error.message], [false, 'method_not_allowed', `${m} is not allowed here; this path takes ${allow}`], `${m} ${p}: says what is allowed`);
  });
  for (const method of ['POST', 'OPTIONS']) {
    const outside = await http(`${s.url}/api/v1/rigs/rig-1`, { method, headers: { host: 'evil.example' } });
    t.deepEqual([outside.status, outside.headers['content-type']], [403, 'text/html; charset=UTF-8'], `${method} under /api/v1/rigs from outside the VPN: the VPN rule's 403 page`);
    t.match(outside.text, /Blocked host: evil\.example/, `${method} from outside: "Blocked host"`);
  }
  const sessions = await http(`${s.url}/api/v1/sessions`, { method: 'GET' });
  t.deepEqual([sessions.status, sessions.headers['allow']], [405, 'POST, DELETE'], 'GET /api/v1/sessions: 405, Allow: POST, DELETE');
  const users = await http(`${s.url}/api/v1/users/1`, { method: 'POST', json: {} });
  t.deepEqual([users.status, users.headers['allow']], [405, 'PUT'], 'POST /api/v1/users/1: 405, Allow: PUT');
  const unknown = await http(`${s.url}/api/v1/nothing-here`, { method: 'POST', json: {} });
  t.deepEqual([unknown.status, unknown.json().error.code], [404, 'not_found'], 'a path no route serves: 404');
  t.deepEqual(await stored(), before, 'nothing stored changed');
});

test('broken percent-encoding in a path: 400 that says so, from anywhere; nothing reached', async (t) => {
  await setup();
  const before = await stored();
  for (const id of ['rig%', 'rig%zz', 'rig%ff', 'r%C3']) {
    const r = await net.request('rig', rigReq('PUT', `/api/v1/rigs/${id}`, REPORT));
    t.equal(r.status, 400, `PUT /api/v1/rigs/${id}: 400`);
    const body = JSON.parse(r.body);
    t.deepEqual([body.error.code, body.error.message], ['invalid_path', 'the request path has malformed percent-encoding'], `${id}: says the path is malformed`);
  }
  const outside = await http(`${s.url}/api/v1/rigs/rig%zz`, { method: 'PUT', body: REPORT, headers: { 'content-type': FORM } });
  t.deepEqual([outside.status, outside.json().error?.code], [400, 'invalid_path'], 'from outside the VPN too: the path reaches no route');
  t.deepEqual(await stored(), before, 'nothing stored changed');
});

test('bytes after a body that are not HTTP: 400 that says so; the server keeps serving', async (t) => {
  await setup();
  const port = Number(s.server.info.port);
  const body = JSON.stringify({ login: 'ana', password: 'x' });
  // A whole request, then garbage on the same connection (a client that counted its body wrong).
  const raw = `POST /api/v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}not http at all\r\n\r\n`;
  const answer = await new Promise<string>((resolve, reject) => {
    const sock = connect(port, '127.0.0.1', () => sock.write(raw));
    let out = '';
    sock.on('data', (d) => (out += d));
    sock.on('end', () => resolve(out));
    sock.on('error', reject);
  });
  t.match(answer, /^HTTP\/1\.1 400 /, `400: ${answer.split('\r\n')[0]}`);
  const json = answer.slice(answer.indexOf('\r\n\r\n') + 4);
  t.match(json, /"code":"malformed_request"/, `a body that says what is wrong: ${json}`);
  t.doesNotMatch(answer, /"message":"Bad Request"/, 'not a bare "Bad Request"');
  const ok = await http(`${s.url}/api/v1/sessions`, { json: { login: 'ana', password: ana.password } });
  t.equal(ok.status, 200, 'the server still serves');
});

/** PUTs that send their headers and `head` of `total` body bytes and close the connection at once, from the rig. */
async function cutPuts(urls: string[], total: number, head: number): Promise<void> {
  const port = Number(s.server.info.port);
  const script = `
    const net = require('node:net');
    const urls = ${JSON.stringify(urls)};
    let left = urls.length;
    for (const url of urls) {
      const u = new URL(url);
      const sock = net.connect({ host: '10.144.118.1', port: ${port} }, () => {
        sock.end('PUT ' + u.pathname + u.search + ' HTTP/1.1\\r\\nHost: ' + u.host + '\\r\\nContent-Length: ${total}\\r\\n\\r\\n' + 'a'.repeat(${head}));
      });
      sock.on('error', () => {});
      sock.on('close', () => { if (--left === 0) process.exit(0); });
      sock.resume();
    }`;
  const res = await net.exec('rig', [process.execPath, '-e', script]);
  if (res.code !== 0) throw new Error(`the cut-off PUTs failed: ${res.stderr}`);
}

test('uploads cut off right after their headers: every one released (no temp file, none in flight); the stored object intact', async (t) => {
  await setup();
  // Signed for the configured public URL (its Host); sent to this server's address.
  const reserve = async (size: number) => {
    const r = await net.request('rig', { url: `${base}/api/v1/rigs/upload?key=cut/one.bin&size=${size}`, headers: { host: VPN_HOST } });
    if (r.status !== 200) throw new Error(`reserve: ${r.status} ${r.body}`);
    return JSON.parse(r.body).url as string;
  };
  const first = new URL(await reserve(10));
  const put = await net.request('rig', { url: `${base}${first.pathname}${first.search}`, method: 'PUT', headers: { host: first.host }, body: '0123456789' });
  t.equal(put.status, 200, `the object is stored first (${put.status} ${put.body})`);
  const urls: string[] = [];
  for (let i = 0; i < 8; i++) urls.push(await reserve(10));
  await cutPuts(urls, 10, 4);
  const tmp = path.join(s.config.data_dir, 'objects', '.tmp');
  const parts = () => (existsSync(tmp) ? readdirSync(tmp) : []);
  // Released at once when it works; a generous bound for a busy machine, never an answer to wait for.
  for (let waited = 0; waited < 15_000 && (parts().length > 0 || s.app.uploads.progress.inFlight().length > 0); waited += 100) {
    await new Promise((r) => setTimeout(r, 100));
  }
  t.deepEqual(parts(), [], 'no temp file left');
  t.deepEqual(s.app.uploads.progress.inFlight(), [], 'no upload left in flight');
  const chunks: Buffer[] = [];
  for await (const c of await s.app.storage.read('cut/one.bin')) chunks.push(c as Buffer);
  t.equal(Buffer.concat(chunks).toString(), '0123456789', 'the stored object is intact');
});

/** Sends `raw` on a connection of its own from loopback; resolves with everything the server answered until it closed. */
function rawExchange(raw: string | Buffer): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const sock = connect(Number(s.server.info.port), '127.0.0.1', () => sock.write(raw));
    let out = '';
    sock.on('data', (d) => (out += d.toString('latin1')));
    sock.on('end', () => resolve(out));
    sock.on('error', reject);
  });
}

test('requests the HTTP parser refuses: a status and a JSON body that says what is wrong, not a bare 400', async (t) => {
  await setup();
  const head = (lines: string) => `${lines}\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;
  const cases: [string, string, RegExp, string][] = [
    ['headers too large', head(`GET /api/v1/sessions HTTP/1.1\r\nX-Big: ${'a'.repeat(20_000)}`), /^HTTP\/1\.1 431 /, 'headers_too_large'],
    ['many headers', head(`GET /api/v1/sessions HTTP/1.1\r\n${Array.from({ length: 3000 }, (_, i) => `X-H${i}: 1`).join('\r\n')}`), /^HTTP\/1\.1 431 /, 'headers_too_large'],
    ['an unknown method', head('BREW /api/v1/sessions HTTP/1.1'), /^HTTP\/1\.1 400 /, 'malformed_request'],
    ['Content-Length not a number', head('POST /api/v1/sessions HTTP/1.1\r\nContent-Length: abc'), /^HTTP\/1\.1 400 /, 'malformed_request'],
    ['a NUL in the path', head('GET /api/v1/rigs/a\u0000b HTTP/1.1'), /^HTTP\/1\.1 400 /, 'malformed_request'],
  ];
  for (const [name, raw, status, code] of cases) {
    const answer = await rawExchange(raw);
    t.match(answer, status, `${name}: ${answer.split('\r\n')[0]}`);
    t.match(answer, /\r\ncontent-type: application\/json; charset=utf-8\r\n/i, `${name}: JSON`);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4) || 'null');
    t.deepEqual([body?.success, body?.error?.code], [false, code], `${name}: ${body?.error?.message}`);
  }
  const ok = await http(`${s.url}/api/v1/sessions`, { json: { login: 'ana', password: ana.password } });
  t.equal(ok.status, 200, 'the server still serves');
});

test('ids and numbers at the edges of their types (PostgreSQL integer columns): 400 or 404, never a 500', async (t) => {
  await setup();
  const auth = { authorization: ana.token };
  const cases: [string, string, string, unknown, number[]][] = [
    ['a capture id past int4', '/api/v1/captures/2147483648', 'GET', undefined, [404]],
    ['the largest safe capture id', '/api/v1/captures/9007199254740991', 'GET', undefined, [404]],
    ['a table of a capture id past int4', '/api/v1/captures/2147483648/tables/t', 'GET', undefined, [404]],
    ['before= past int4', '/api/v1/captures?before=2147483648', 'GET', undefined, [200]],
    ['before= the largest safe integer', '/api/v1/captures?before=9007199254740991', 'GET', undefined, [200]],
    ['a user id past int4', '/api/v1/users/2147483648', 'PUT', { user: { rig_ui_settings: 1 } }, [400, 403, 404]],
    ['a user id past int8', '/api/v1/users/99999999999999999999', 'PUT', { user: { rig_ui_settings: 1 } }, [400, 403, 404]],
    ['user.id past int4 in the body', '/api/v1/users/1', 'PUT', { user: { id: 2147483648, rig_ui_settings: 1 } }, [400]],
  ];
  for (const [name, path, method, json, statuses] of cases) {
    const res = await http(`${s.url}${path}`, { method, headers: auth, ...(json === undefined ? {} : { json }) });
    t.ok(statuses.includes(res.status), `${name}: ${res.status} ${res.text.slice(0, 160)}`);
  }
  // An admin may change anyone: the id reaches the database.
  const root = await userWithToken(s, 'edge-admin', { admin: true });
  for (const id of ['2147483648', '9007199254740991']) {
    const res = await http(`${s.url}/api/v1/users/${id}`, { method: 'PUT', headers: { authorization: root.token }, json: { user: { rig_ui_settings: 1 } } });
    t.ok([400, 404].includes(res.status), `an admin, user id ${id}: ${res.status} ${res.text.slice(0, 160)}`);
  }
  const rigs = await net.requestAll('rig', [
    rigReq('GET', '/api/v1/rigs/upload?key=edge.bin&size=9007199254740991'),
    rigReq('GET', '/api/v1/rigs/upload?key=edge.bin&size=9007199254740992'),
  ]);
  for (const r of rigs) t.ok(r.status >= 400 && r.status < 500, `an upload size past the limit: ${r.status} ${r.body.slice(0, 160)}`);
});

test('teardown', async (t) => {
  await setup();
  await closeServer(t, s);
  await net.destroy();
});
