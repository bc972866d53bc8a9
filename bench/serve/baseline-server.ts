// The reference of the report benches, in a process of its own: a bare hapi server with one PUT
// route on rig reports' path, parsing the same body (the seed's form, or JSON) and answering "Ok"
// as rigd does, with nothing else. argv: host. Prints its port on stdout, then serves until SIGTERM.
import Hapi from '@hapi/hapi';

const server = Hapi.server({ host: process.argv[2] ?? '127.0.0.1', port: 0 });
server.route({
  method: 'PUT',
  path: '/api/v1/rigs/{id}',
  options: { payload: { allow: ['application/x-www-form-urlencoded', 'application/json'] } },
  handler: (_request, h) => h.response('Ok').type('text/plain; charset=utf-8'),
});
await server.start();
process.stdout.write(`${server.info.port}\n`);
process.once('SIGTERM', () => void server.stop({ timeout: 1000 }).then(() => process.exit(0)));
