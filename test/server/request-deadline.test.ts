// test: alone (short request deadlines)
// The time a request may take to arrive (src/server/ext/request-deadline.ts), on a real hapi server
// over real sockets, with a short limit: a body that crawls in is cut on every route but an upload
// route, which has no total limit.
import Hapi from '@hapi/hapi';
import net from 'node:net';
import type { Readable } from 'node:stream';
import test from 'tape';
import { registerRequestDeadline } from '../../src/server/ext/request-deadline.ts';
import '../../src/server/types.ts';

const LIMIT_MS = 1500;
let server: Hapi.Server;
let port = 0;

/** Sends `head`, then `body` one byte every `everyMs`; resolves with what came back and when the connection ended. */
function crawl(head: string, body: string, everyMs: number): Promise<{ response: string; ms: number; sentAll: boolean }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const sock = net.connect({ host: '127.0.0.1', port });
    let response = '';
    let at = 0;
    let timer: NodeJS.Timeout | null = null;
    sock.on('data', (d) => (response += d.toString('latin1')));
    sock.on('error', () => undefined);
    sock.on('close', () => {
      if (timer) clearTimeout(timer);
      resolve({ response, ms: Date.now() - started, sentAll: at >= body.length });
    });
    const next = () => {
      if (sock.destroyed || at >= body.length) return;
      sock.write(body[at++]!);
      timer = setTimeout(next, everyMs);
    };
    sock.on('connect', () => {
      sock.write(head);
      next();
    });
  });
}

const request = (method: string, path: string, length: number) =>
  `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`;

test('setup', async (t) => {
  server = Hapi.server({ host: '127.0.0.1', port: 0 });
  registerRequestDeadline(server, { limitMs: LIMIT_MS, checkEveryMs: 100 });
  server.route([
    { method: 'POST', path: '/json', handler: (req) => ({ got: req.payload }) },
    {
      method: 'PUT',
      path: '/upload',
      options: {
        app: { upload: true },
        payload: { output: 'stream', parse: false, timeout: false },
        timeout: { socket: false },
        handler: async (req) => {
          let n = 0;
          for await (const c of req.payload as Readable) n += (c as Buffer).length;
          return `received ${n}`;
        },
      },
    },
  ]);
  await server.start();
  port = Number(server.info.port);
  t.equal(server.listener.requestTimeout, 0, "Node's own requestTimeout is off (it cannot spare one route)");
});

test('a JSON body crawling in past the limit is cut with 408', async (t) => {
  // About 12 s to send whole: far past the limit, even when a busy machine holds the check back.
  const body = JSON.stringify({ x: 'y'.repeat(70) });
  const r = await crawl(request('POST', '/json', body.length), body, 150);
  t.notOk(r.sentAll, `cut before the whole body arrived (after ${r.ms} ms; limit ${LIMIT_MS} ms)`);
  t.match(r.response, /^HTTP\/1\.1 408 /, '408 Request Timeout');
});

test('an upload route has no total limit: a body that keeps coming is taken whole', async (t) => {
  const body = 'u'.repeat(20);
  const r = await crawl(request('PUT', '/upload', body.length), body, 150);
  t.ok(r.ms > LIMIT_MS, `took ${r.ms} ms, longer than the limit`);
  t.ok(r.sentAll, 'every byte was sent');
  t.match(r.response, /^HTTP\/1\.1 200 [\s\S]*received 20$/, 'stored whole: 200');
});

test('a quick request is not affected', async (t) => {
  // Head and body in one write: nothing for a stalled machine to spread past the limit.
  const r = await crawl(request('POST', '/json', 2) + '{}', '', 1);
  t.match(r.response, /^HTTP\/1\.1 200 /, '200');
});

test('teardown', async (t) => {
  await server.stop();
  t.pass('stopped');
});
