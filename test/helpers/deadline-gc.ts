// Child of test/server/request-deadline-gc.test.ts, run as node --expose-gc --trace-gc-nvp
// --max-semi-space-size=32 (as rigd serve): a hapi server with the request deadline (src/server/ext/request-deadline.ts)
// whose answers wait for a shared "commit" every 10 ms, as rig reports wait for their batch, loaded by
// 100 keep-alive connections in turn. Before the load, a quiet spell's scavenges move the server's
// long-lived state (the deadline's watch list among it) to the old generation. V8's line per
// collection (stdout) says how much each scavenge promoted; the last line is {"answered":N}.
import Hapi from '@hapi/hapi';
import http from 'node:http';
import { registerRequestDeadline } from '../../src/server/ext/request-deadline.ts';
import '../../src/server/types.ts';

const gc = (globalThis as { gc?: (o?: { type: 'minor' | 'major' }) => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const TOTAL = Number(process.argv[2] ?? 6000);
const CONNECTIONS = 100;

const server = Hapi.server({ host: '127.0.0.1', port: 0 });
registerRequestDeadline(server);
let waiting: (() => void)[] = [];
let commit: NodeJS.Timeout | null = null;
const committed = () =>
  new Promise<void>((resolve) => {
    waiting.push(resolve);
    commit ??= setTimeout(() => {
      const done = waiting;
      waiting = [];
      commit = null;
      for (const r of done) r();
    }, 10);
  });
server.route({
  method: 'PUT',
  path: '/r/{id}',
  handler: async () => {
    await committed();
    return 'Ok';
  },
});
await server.start();
const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
const put = (i: number) =>
  new Promise<void>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.info.port, method: 'PUT', path: `/r/${i % 1000}`, agent, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end('{"rig_serial":"SN-0042"}');
  });
let sent = 0;
const connection = async () => {
  while (sent < TOTAL) await put(sent++);
};

// Warm-up, then a quiet spell: the server's state gets old.
sent = TOTAL - 500;
await Promise.all(Array.from({ length: CONNECTIONS }, connection));
for (let i = 0; i < 3; i++) {
  await new Promise((r) => setTimeout(r, 20));
  gc({ type: 'minor' });
}
process.stdout.write('-- load\n');
sent = 0;
await Promise.all(Array.from({ length: CONNECTIONS }, connection));
process.stdout.write(`\n{"answered":${TOTAL}}\n`);
agent.destroy();
await server.stop();
