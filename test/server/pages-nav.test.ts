// The pages lead to each other: `/` is the rig list, /rigs links to /map and /map back to /rigs.
import test from 'tape';
import { startServer } from '../helpers/server.ts';

test('GET / redirects to /rigs; /rigs links to /map and /map back; / is for the same clients as /rigs', async (t) => {
  const s = await startServer();
  try {
    const root = await s.server.inject({ url: '/', remoteAddress: '127.0.0.1', headers: { host: 'localhost' } });
    t.equal(root.statusCode, 302, 'GET /: a redirect (was a JSON 404)');
    t.equal(root.headers.location, '/rigs', 'to /rigs');
    const rigs = await s.server.inject({ url: '/rigs', remoteAddress: '127.0.0.1', headers: { host: 'localhost' } });
    t.match(rigs.payload, /<a href="\/map">/, '/rigs links to /map');
    const map = await s.server.inject({ url: '/map', remoteAddress: '127.0.0.1', headers: { host: 'localhost' } });
    t.match(map.payload, /<a href="\/rigs">/, '/map links back to /rigs');
    const outside = await s.server.inject({ url: '/', remoteAddress: '192.0.2.7', headers: { host: 'localhost' } });
    t.equal(outside.statusCode, 403, 'outside the VPN and loopback: 403, as /rigs');
  } finally {
    await s.close();
  }
});
