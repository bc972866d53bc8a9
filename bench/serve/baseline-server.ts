// The reference of the report benches, in a process of its own: a bare hapi server with one PUT
// route on rig reports' path, parsing the same body (the seed's form, or JSON) and answering "Ok"
// as rigd does, with nothing else; and, for the upload bench, GET /api/v1/rigs/upload answering a
// reservation's JSON shape without doing anything. argv: host. Prints its port on stdout, then serves until SIGTERM.
import Hapi from '@hapi/hapi';

const server = Hapi.server({ host: process.argv[2] ?? '127.0.0.1', port: 0 });
server.route({
  method: 'PUT',
  path: '/api/v1/rigs/{id}',
  options: { payload: { allow: ['application/x-www-form-urlencoded', 'application/json'] } },
  handler: (_request, h) => h.response('Ok').type('text/plain; charset=utf-8'),
});
server.route({
  method: 'GET',
  path: '/api/v1/rigs/upload',
  handler: () => ({ success: true, url: 'http://127.0.0.1/captures/bench/k.sqlite?X-Amz-Signature=0', exists: false, size: null, id: 1 }),
});
await server.start();
process.stdout.write(`${server.info.port}\n`);
process.once('SIGTERM', () => void server.stop({ timeout: 1000 }).then(() => process.exit(0)));
