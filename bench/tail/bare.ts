// The reference of the report benches: a bare hapi server with one PUT route on rig reports' path,
// answering "Ok" as rigd does, with nothing else.
import Hapi from '@hapi/hapi';

export async function bareServer(host = '127.0.0.1'): Promise<Hapi.Server> {
  const server = Hapi.server({ host, port: 0 });
  server.route({
    method: 'PUT',
    path: '/api/v1/rigs/{id}',
    options: { payload: { allow: ['application/x-www-form-urlencoded', 'application/json'] } },
    handler: (_request, h) => h.response('Ok').type('text/plain; charset=utf-8'),
  });
  await server.start();
  return server;
}
