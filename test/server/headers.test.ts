import test from 'tape';
import { weakEtag } from '../../src/server/ext/headers.ts';
import { requestIdFrom } from '../../src/server/ext/request-context.ts';
import { http } from '../helpers/http.ts';
import { startServer } from '../helpers/server.ts';

test('ETag is W/" + first 32 hex of the body SHA-256; If-None-Match on GET gives 304', async (t) => {
  const s = await startServer();
  try {
    s.server.route({ method: 'GET', path: '/api/v1/test-echo', options: { auth: false, handler: () => ({ hello: 'world' }) } });
    const res = await http(`${s.url}/api/v1/test-echo`);
    t.equal(res.status, 200);
    t.equal(res.headers['etag'], weakEtag(res.text), 'etag over the exact bytes sent');
    t.equal(weakEtag('{"hello":"world"}'), 'W/"93a23971a914e5eacbf0a8d25154cda3"', 'known value');
    const again = await http(`${s.url}/api/v1/test-echo`, { headers: { 'if-none-match': String(res.headers['etag']) } });
    t.equal(again.status, 304, 'matching If-None-Match: 304');
    t.equal(again.text, '', '304 has no body');
    t.equal(again.headers['etag'], res.headers['etag'], '304 repeats the etag');
    const stale = await http(`${s.url}/api/v1/test-echo`, { headers: { 'if-none-match': 'W/"0000"' } });
    t.equal(stale.status, 200, 'other etag: 200');
  } finally {
    await s.close();
  }
});

test('X-Request-Id: echoed when clean, sanitised, or generated', async (t) => {
  t.equal(requestIdFrom('abc-123_X@y'), 'abc-123_X@y', 'kept');
  t.equal(requestIdFrom('a b<script>c'), 'abscriptc', 'stripped to [A-Za-z0-9_@-]');
  t.equal(requestIdFrom('x'.repeat(300)).length, 255, 'cut to 255');
  t.match(requestIdFrom('!!!'), /^[0-9a-f-]{36}$/, 'nothing left: a new UUID');
  const s = await startServer();
  try {
    const res = await http(`${s.url}/api/v1/sessions`, { json: { login: 'x', password: 'y' }, headers: { 'x-request-id': 'rig-42 <b>' } });
    t.equal(res.headers['x-request-id'], 'rig-42b', 'echoed sanitised on an error response too');
    const none = await http(`${s.url}/nowhere`);
    t.match(String(none.headers['x-request-id']), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'generated UUID v4');
    t.equal(none.status, 404);
    t.equal(none.json().error.code, 'not_found', 'unknown path: JSON 404');
  } finally {
    await s.close();
  }
});
