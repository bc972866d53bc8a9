// GET /api/v1/openapi.json: an OpenAPI 3.0 document built from the routes' joi schemas. It is valid
// (swagger-parser: schema and refs), covers every route under /api/ (a route added without it fails
// here) and nothing outside, says what the interface says (form rig report answering text Ok, the
// raw-token Authorization apiKey, the shared error body, login, users and upload shapes), and real
// answers of login, users PUT, rigs list, upload URL, webhook and an error fit its schemas.
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import test from 'tape';
import { putFile } from '../helpers/captures.ts';
import { makeCapture } from '../helpers/capture-files.ts';
import { http } from '../helpers/http.ts';
import { createHosts, type Hosts } from '../helpers/netns.ts';
import { schemaProblems } from '../helpers/openapi-schema.ts';
import { closeServer } from '../helpers/closed.ts';
import { startServer, userWithToken, type TestServer } from '../helpers/server.ts';
import { closedPort } from '../helpers/storage.ts';
import { tmpDir } from '../helpers/tmp.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const GW = '10.144.200.1';
let net: Hosts;
let s: TestServer;
let port = 0;
let doc: Json;
let ana: { id: string; token: string; password: string };

function op(method: string, p: string): Json {
  const found = doc.paths[p]?.[method];
  if (!found) throw new Error(`no ${method.toUpperCase()} ${p} in the document`);
  return found;
}

/** The 200 schema of an operation for a content type. */
function okSchema(method: string, p: string, type = 'application/json'): Json {
  return op(method, p).responses['200'].content[type].schema;
}

function fits(t: test.Test, what: string, schema: Json, value: unknown): void {
  const problems = schemaProblems(doc, schema, value);
  t.deepEqual(problems, [], `${what} fits the document's schema`);
}

/** A request from the rig inside the VPN. */
function rig(p: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return net.request('inside', {
    url: `http://${GW}:${port}${p}`,
    method: opts.method ?? 'GET',
    headers: { host: `${GW}:${port}`, ...opts.headers },
    body: opts.body,
  });
}

test('setup: server on the VPN address, a user, a rig inside', async (t) => {
  net = await createHosts([{ name: 'inside', addr: '10.144.200.2', gw: GW }]);
  port = await closedPort();
  s = await startServer({ server: { port }, storage: { public_url: `http://${GW}:${port}` } }, { host: '::', port });
  ana = await userWithToken(s, 'ana');
  const res = await http(`${s.url}/api/v1/openapi.json`);
  t.equal(res.status, 200);
  t.match(String(res.headers['content-type']), /^application\/json/);
  doc = res.json();
  t.equal(doc.openapi, '3.0.3');
});

test('swagger-parser validates the document (OpenAPI 3 schema and every $ref)', async (t) => {
  const api = (await SwaggerParser.validate(structuredClone(doc) as never)) as Json;
  t.ok(api.paths['/api/v1/sessions'], 'validated and dereferenced');
});

test('every route under /api/ is in the document, nothing outside it, each with operationId, summary, tags', async (t) => {
  const described = new Set<string>();
  for (const [p, ops] of Object.entries(doc.paths as Record<string, Json>)) for (const m of Object.keys(ops)) described.add(`${m.toUpperCase()} ${p}`);
  const missing: string[] = [];
  const outside: string[] = [];
  for (const route of s.server.table()) {
    const name = `${route.method.toUpperCase()} ${route.path}`;
    if (route.path.startsWith('/api/')) {
      if (!described.has(name)) missing.push(name);
      described.delete(name);
    } else if (described.has(name)) outside.push(name);
  }
  t.deepEqual(missing, [], 'no /api/ route is left out');
  t.deepEqual(outside, [], 'HTML pages, assets, /healthz, /metrics and object-store paths are left out');
  t.deepEqual([...described], [], 'nothing described that is not a route');
  t.ok(s.server.table().some((r) => r.path === '/rigs'), 'the rule was tried on a non-API route');
  const ids = new Set<string>();
  for (const [p, ops] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [m, o] of Object.entries(ops as Record<string, Json>)) {
      t.ok(o.operationId && !ids.has(o.operationId), `${m} ${p}: operationId ${o.operationId}`);
      ids.add(o.operationId);
      t.notEqual(o.summary, `${m.toUpperCase()} ${p}`, `${m} ${p}: a summary from the route's description`);
      t.ok(Array.isArray(o.tags) && o.tags.length > 0, `${m} ${p}: tags`);
      const json = o.responses['200'].content['application/json'];
      if (json) t.ok(json.schema.properties, `${m} ${p}: the JSON answer has a described shape`);
    }
  }
});

test('the rig report takes a form body with the interface fields and answers Ok as text/plain', async (t) => {
  const report = op('put', '/api/v1/rigs/{id}');
  const form = report.requestBody.content['application/x-www-form-urlencoded'].schema;
  for (const f of ['rig_serial', 'gpsd_latitude', 'gpsd_longitude', 'local_ip', 'software_version', 'git_branch']) t.ok(form.properties[f], `form field ${f}`);
  t.deepEqual(report.parameters.map((p: Json) => [p.in, p.name, p.required]), [['path', 'id', true]]);
  const ok = report.responses['200'].content;
  t.deepEqual(Object.keys(ok), ['text/plain'], 'the answer is text/plain');
  t.deepEqual(ok['text/plain'].schema, { type: 'string', enum: ['Ok'] });
  t.deepEqual(report.security, [], 'no token');
  t.equal(report.responses['400'].$ref, '#/components/responses/TextError', 'its errors are text lines');
  t.equal(report.responses['403'].$ref, '#/components/responses/BlockedHost', 'the VPN rule');
  const res = await rig('/api/v1/rigs/rig200', {
    method: 'PUT',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'rig_serial=S200&gpsd_latitude=46.5&gpsd_longitude=6.6&local_ip=192.168.1.20&software_version=1.2.3&git_branch=main',
  });
  t.equal(res.status, 200);
  t.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
  t.equal(res.body, 'Ok');
});

test('the token: an apiKey in Authorization (no scheme word), the token cookie as a second scheme', async (t) => {
  const schemes = doc.components.securitySchemes;
  t.deepEqual({ type: schemes.tokenHeader.type, in: schemes.tokenHeader.in, name: schemes.tokenHeader.name }, { type: 'apiKey', in: 'header', name: 'Authorization' });
  t.deepEqual({ type: schemes.tokenCookie.type, in: schemes.tokenCookie.in, name: schemes.tokenCookie.name }, { type: 'apiKey', in: 'cookie', name: 'token' });
  t.deepEqual(op('put', '/api/v1/users/{id}').security, [{ tokenHeader: [] }, { tokenCookie: [] }]);
  t.deepEqual(op('post', '/api/v1/webhooks/capture_uploaded').security, [{ tokenHeader: [] }, { tokenCookie: [] }]);
  t.deepEqual(op('post', '/api/v1/sessions').security, [], 'login needs no token');
});

test('the error body is one shared component, referenced from every 4xx/5xx answer', async (t) => {
  const error = doc.components.schemas.Error;
  t.deepEqual(error.required, ['success', 'error']);
  t.deepEqual([...error.properties.error.required].sort(), ['code', 'details', 'message']);
  t.equal(doc.components.responses.Error.content['application/json'].schema.$ref, '#/components/schemas/Error');
  let refs = 0;
  for (const [p, ops] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [m, o] of Object.entries(ops as Record<string, Json>)) {
      for (const [code, r] of Object.entries(o.responses as Record<string, Json>)) {
        if (!/^[45]/.test(code) && code !== 'default') continue;
        t.ok(/^#\/components\/responses\/(Error|TextError|BlockedHost)$/.test(r.$ref), `${m} ${p} ${code}: ${r.$ref}`);
        if (r.$ref === '#/components/responses/Error') refs++;
      }
    }
  }
  t.ok(refs > 10, `${refs} answers use the JSON error`);
  t.deepEqual(Object.keys(op('post', '/api/v1/sessions').responses), ['200', '400', '401', '413', '415', '429', '503', 'default'], 'login: wrong password 401, throttle 429');
  const wrong = await http(`${s.url}/api/v1/sessions`, { json: { login: 'ana', password: 'not-hers' } });
  t.equal(wrong.status, 401);
  fits(t, 'a real 401 of login', { $ref: '#/components/schemas/Error' }, wrong.json());
  const bad = await http(`${s.url}/api/v1/sessions`, { json: { login: 'ana' } });
  t.equal(bad.status, 400);
  fits(t, 'a real 400 body', { $ref: '#/components/schemas/Error' }, bad.json());
  const noToken = await http(`${s.url}/api/v1/captures`);
  t.equal(noToken.status, 401);
  fits(t, 'a real 401 body', { $ref: '#/components/schemas/Error' }, noToken.json());
});

test('request shapes as the interface gives them: login, users PUT, upload query, webhook', async (t) => {
  const login = op('post', '/api/v1/sessions').requestBody.content['application/json'].schema;
  t.equal(login.properties.login.type, 'string');
  t.equal(login.properties.password.type, 'string');
  t.deepEqual(login.required, ['password']);
  const user = op('put', '/api/v1/users/{id}');
  t.ok(user.requestBody.content['application/json'].schema.properties.user.properties.rig_ui_settings, 'user.rig_ui_settings');
  t.deepEqual(user.parameters.map((p: Json) => [p.in, p.name, p.schema.type]), [['path', 'id', 'string']]);
  const upload = op('get', '/api/v1/rigs/upload');
  const q = Object.fromEntries(upload.parameters.map((p: Json) => [p.name, p]));
  t.deepEqual(Object.keys(q).sort(), ['key', 'project', 'size']);
  t.ok(q.key.in === 'query' && q.key.schema.type === 'string' && q.key.required, 'key: string, required');
  t.ok(q.size.in === 'query' && q.size.schema.type === 'integer' && q.size.required, 'size: integer, required');
  t.equal(q.size.schema.maximum, s.config.storage.max_upload_size, 'size: at most storage.max_upload_size');
  t.ok(q.project.in === 'query' && q.project.schema.type === 'string' && !q.project.required, 'project: string, optional');
  const hook = op('post', '/api/v1/webhooks/capture_uploaded').requestBody.content['application/json'].schema;
  t.ok(hook.anyOf.some((alt: Json) => alt.properties?.url?.type === 'string'), 'the webhook body {url}');
});

test('real answers fit the document: login, users PUT, rigs list, upload URL, webhook', async (t) => {
  const login = await http(`${s.url}/api/v1/sessions`, { json: { login: 'ana', password: ana.password } });
  t.equal(login.status, 200);
  fits(t, 'login', okSchema('post', '/api/v1/sessions'), login.json());
  const token = login.json().token as string;

  const put = await http(`${s.url}/api/v1/users/${ana.id}`, {
    method: 'PUT',
    headers: { authorization: token },
    json: { user: { id: ana.id, rig_ui_settings: { button: { x: 0.5, y: 0.25 } } } },
  });
  t.equal(put.status, 200);
  fits(t, 'users PUT', okSchema('put', '/api/v1/users/{id}'), put.json());

  const list = await rig('/api/v1/rigs', { headers: { authorization: token } });
  t.equal(list.status, 200);
  const rigs = JSON.parse(list.body);
  t.equal(rigs.data.rigs.length, 1, 'the rig reported above is listed');
  fits(t, 'rigs list', okSchema('get', '/api/v1/rigs'), rigs);

  const upload = await rig('/api/v1/rigs/upload?key=rig200/a.sqlite&size=4096&project=alpha');
  t.equal(upload.status, 200);
  fits(t, 'upload URL', okSchema('get', '/api/v1/rigs/upload'), JSON.parse(upload.body));

  const made = await makeCapture(path.join(tmpDir(), 'b.sqlite'));
  await putFile(s.app, 'rig200/b.sqlite', made.path);
  const hook = await http(`${s.url}/api/v1/webhooks/capture_uploaded`, { json: { url: s.app.storage.objectUrl('rig200/b.sqlite') }, headers: { authorization: token } });
  t.equal(hook.status, 200);
  t.equal(hook.json().data.queued, true);
  fits(t, 'webhook', okSchema('post', '/api/v1/webhooks/capture_uploaded'), hook.json());

  const captures = await http(`${s.url}/api/v1/captures`, { headers: { authorization: token } });
  fits(t, 'captures list', okSchema('get', '/api/v1/captures'), captures.json());
  const one = await http(`${s.url}/api/v1/captures/${captures.json().data.captures[0].id}`, { headers: { authorization: token } });
  fits(t, 'one capture', okSchema('get', '/api/v1/captures/{id}'), one.json());
  const detail = await rig('/api/v1/rigs/rig200', { headers: { authorization: token } });
  fits(t, 'one rig', okSchema('get', '/api/v1/rigs/{id}'), JSON.parse(detail.body));
  const reports = await rig('/api/v1/rigs/rig200/reports', { headers: { authorization: token } });
  fits(t, 'rig reports', okSchema('get', '/api/v1/rigs/{id}/reports'), JSON.parse(reports.body));
});

test('a schema that does not fit is caught (the checker can fail)', async (t) => {
  const problems = schemaProblems(doc, okSchema('get', '/api/v1/rigs/upload'), { success: true, url: 'x', exists: 'no', size: null });
  t.deepEqual([...problems].sort(), ['$.exists: expected boolean, got string', '$.id: required, missing']);
});

test('teardown', async (t) => {
  await closeServer(t, s);
  await net.destroy();
});
