// rigd's extensions are ordered by name (hapi's server.ext before/after, src/server/ext/names.ts),
// not by the order they are registered in: registered backwards, an error still becomes the JSON
// error body before the common headers are added, and the request id is set before anything reads it.
import test from 'tape';
import Hapi from '@hapi/hapi';
import { InvalidInput } from '../../src/errors.ts';
import { silentLogger } from '../../src/log.ts';
import { registerBodyLimit } from '../../src/server/ext/body-limit.ts';
import { registerErrors } from '../../src/server/ext/errors.ts';
import { registerHeaders, SECURITY } from '../../src/server/ext/headers.ts';
import { EXT } from '../../src/server/ext/names.ts';
import { registerRequestContext } from '../../src/server/ext/request-context.ts';
import '../../src/server/types.ts';

const ext = (name: string, register: (s: Hapi.Server) => void): Hapi.Plugin<void> => ({ name, register });

test('registered in reverse order, the extensions still run in their named order', async (t) => {
  const server = Hapi.server({ routes: { security: SECURITY } });
  await server.register([
    ext(EXT.bodyLimit, (s) => registerBodyLimit(s)),
    ext(EXT.headers, registerHeaders),
    ext(EXT.errors, (s) => registerErrors(s, silentLogger)),
    ext(EXT.context, (s) => registerRequestContext(s, [])),
  ]);
  server.route({ method: 'GET', path: '/bad', handler: () => Promise.reject(new InvalidInput('no good')) });
  server.route({ method: 'GET', path: '/good', handler: () => ({ fine: true }) });
  const bad = await server.inject({ url: '/bad', headers: { 'x-request-id': 'order-1' } });
  t.equal(bad.statusCode, 400, 'the domain error mapped to its status');
  t.equal(bad.headers['content-type'], 'application/json; charset=utf-8', 'errors ran first: a JSON body...');
  t.equal(JSON.parse(bad.payload).success, false, '...in the error format');
  t.equal(bad.headers['cache-control'], 'no-cache', '...which headers then stamped as a JSON error');
  t.equal(bad.headers['x-request-id'], 'order-1', 'the request id, set first thing, is echoed');
  t.equal(bad.headers['x-permitted-cross-domain-policies'], 'none', 'the common headers are there');
  const good = await server.inject({ url: '/good' });
  t.match(String(good.headers['etag']), /^W\/"[0-9a-f]{32}"$/, 'a JSON answer gets its weak ETag');
  t.equal(good.headers['x-frame-options'], 'SAMEORIGIN', 'and the security headers of routes.security');
  const again = await server.inject({ url: '/good', headers: { 'if-none-match': String(good.headers['etag']) } });
  t.equal(again.statusCode, 304, 'the same ETag: 304');
  await server.stop();
});
