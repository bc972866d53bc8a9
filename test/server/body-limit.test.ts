// Bodies over the 1 MiB limit on real sockets: on a kept-alive connection (after a normal request),
// declared by Content-Length or streamed chunked, and on a fresh one, the client reads 413 with
// `Connection: close` and a JSON error, never ECONNRESET; a sender that trickles its body gets the
// 413 at once and the socket is closed within the linger bound; the server keeps answering.
import http from 'node:http';
import net from 'node:net';
import test from 'tape';
import { closeServer } from '../helpers/closed.ts';
import { startServer, userWithToken, type TestServer } from '../helpers/server.ts';

const MiB = 1024 * 1024;
let s: TestServer;
let port = 0;
let ana: { id: string; token: string };

test('setup', async (t) => {
  s = await startServer();
  port = Number(new URL(s.url).port);
  ana = await userWithToken(s, 'ana');
  t.equal(s.config.server.max_payload_bytes, MiB, 'the limit is 1 MiB');
});

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A raw client socket that reads whole HTTP/1.1 responses (Content-Length bodies) in order. */
function rawClient() {
  const socket = net.connect(port, '127.0.0.1');
  let buf = Buffer.alloc(0);
  let waiter: (() => void) | null = null;
  const events: string[] = [];
  socket.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    waiter?.();
  });
  socket.on('error', (e: NodeJS.ErrnoException) => {
    events.push(`error ${e.code}`);
    waiter?.();
  });
  socket.on('end', () => events.push('end'));
  const closed = new Promise<void>((resolve) => socket.on('close', () => (events.push('close'), resolve(), waiter?.())));
  function parse(): RawResponse | null {
    const head = buf.indexOf('\r\n\r\n');
    if (head < 0) return null;
    const lines = buf.subarray(0, head).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (buf.length < head + 4 + length) return null;
    const body = buf.subarray(head + 4, head + 4 + length).toString('utf8');
    buf = buf.subarray(head + 4 + length);
    return { status: Number(lines[0]!.split(' ')[1]), headers, body };
  }
  return {
    socket,
    events,
    closed,
    connected: new Promise<void>((resolve) => socket.once('connect', () => resolve())),
    /** The next whole response, or an error naming what the socket saw instead. */
    next(): Promise<RawResponse> {
      return new Promise((resolve, reject) => {
        const check = () => {
          const r = parse();
          if (r) {
            waiter = null;
            resolve(r);
          } else if (events.some((e) => e.startsWith('error') || e === 'close')) {
            waiter = null;
            reject(new Error(`no response: ${events.join(', ')}`));
          }
        };
        waiter = check;
        check();
      });
    },
  };
}

function loginRequest(body: string, extra = ''): string {
  return `POST /api/v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
}

test('kept-alive connection, Content-Length 5 MiB after a normal request: 413 with Connection: close, no reset', async (t) => {
  const c = rawClient();
  await c.connected;
  c.socket.write(loginRequest('{"login":"ana","password":"wrong"}'));
  const first = await c.next();
  t.equal(first.status, 401, 'a normal request first: 401 (wrong password)');
  t.equal(first.headers['connection'], 'keep-alive', 'the connection is kept alive');

  const big = Buffer.alloc(5 * MiB, 0x61);
  c.socket.write(`PUT /api/v1/users/${ana.id} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${ana.token}\r\nContent-Type: application/json\r\nContent-Length: ${big.length}\r\n\r\n`);
  const written = new Promise<Error | null | undefined>((resolve) => c.socket.write(big, resolve));
  const res = await c.next().catch((e: Error) => e);
  if (res instanceof Error) {
    t.fail(`the 5 MiB request got no answer: ${res.message}`);
  } else {
    t.equal(res.status, 413, '413');
    t.equal(res.headers['connection'], 'close', 'Connection: close');
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8', 'JSON');
    t.equal(JSON.parse(res.body).error.code, 'payload_too_large', 'error code payload_too_large');
  }
  t.equal(await written, null, 'the client wrote its whole body without EPIPE or a reset');
  c.socket.end();
  await c.closed;
  t.notOk(c.events.some((e) => e.startsWith('error')), `no socket error (${c.events.join(', ')})`);
  t.equal(await s.app.db.models.User.count(), 1, 'nothing stored');
});

test('kept-alive http.Agent, chunked 5 MiB body after a normal request: 413 with Connection: close, no ECONNRESET', async (t) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const send = (body: Buffer | string, chunked: boolean) =>
    new Promise<{ status?: number; headers: http.IncomingHttpHeaders; text: string; port?: number; error?: string }>((resolve) => {
      const req = http.request(
        { host: '127.0.0.1', port, method: 'POST', path: '/api/v1/sessions', agent, headers: { 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': String(Buffer.byteLength(body)) }) } },
        (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text, port: req.socket?.localPort }));
        },
      );
      req.on('error', (e: NodeJS.ErrnoException) => resolve({ headers: {}, text: '', error: e.code ?? e.message }));
      if (!chunked) return req.end(body);
      const b = Buffer.from(body);
      for (let i = 0; i < b.length; i += 64 * 1024) req.write(b.subarray(i, i + 64 * 1024));
      req.end();
    });
  try {
    const first = await send('{"login":"ana","password":"wrong"}', false);
    t.equal(first.status, 401, 'a normal request first');
    const big = await send(Buffer.alloc(5 * MiB, 0x61), true);
    t.equal(big.error, undefined, 'no ECONNRESET or EPIPE');
    t.equal(big.port, first.port, 'on the same kept-alive socket');
    t.equal(big.status, 413, '413');
    t.equal(big.headers['connection'], 'close', 'Connection: close');
    t.equal(big.text ? JSON.parse(big.text).error.code : '', 'payload_too_large', 'JSON error body');
    const after = await send('{"login":"ana","password":"wrong"}', false);
    t.equal(after.status, 401, 'the agent goes on with a new connection');
  } finally {
    agent.destroy();
  }
});

test('fresh connection, 5 MiB: 413 with Connection: close', async (t) => {
  const c = rawClient();
  await c.connected;
  const body = Buffer.alloc(5 * MiB, 0x61);
  c.socket.write(`POST /api/v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
  c.socket.write(body);
  const res = await c.next();
  t.deepEqual([res.status, res.headers['connection'], JSON.parse(res.body).error.code], [413, 'close', 'payload_too_large'], '413, close, payload_too_large');
  c.socket.end();
  await c.closed;
  t.notOk(c.events.some((e) => e.startsWith('error')), `no socket error (${c.events.join(', ')})`);
});

test('a sender that trickles a large body gets the 413 at once and is closed within the linger bound', async (t) => {
  const c = rawClient();
  await c.connected;
  c.socket.write(`POST /api/v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${5 * MiB}\r\n\r\n`);
  const trickle = setInterval(() => c.socket.writable && c.socket.write(Buffer.alloc(1024, 0x61)), 100);
  try {
    // The whole body would take over 8 minutes at this pace: an answer within 60 s came before it.
    const res = await Promise.race([c.next(), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer within 60 s')), 60_000))]).catch((e: Error) => e);
    if (res instanceof Error) return t.fail(res.message);
    t.deepEqual([res.status, res.headers['connection']], [413, 'close'], '413 with Connection: close before the body is sent');
    const started = Date.now();
    const closedInTime = await Promise.race([c.closed.then(() => true), new Promise((r) => setTimeout(() => r(false), 60_000))]);
    t.ok(closedInTime, `the server closed the socket (after ${Date.now() - started} ms; the bound is 5 s)`);
  } finally {
    clearInterval(trickle);
    c.socket.destroy();
  }
});

test('an answer given before the body is read (the VPN rule) is readable on a kept-alive socket', async (t) => {
  const c = rawClient();
  await c.connected;
  c.socket.write(loginRequest('{"login":"ana","password":"wrong"}'));
  t.equal((await c.next()).status, 401, 'a normal request first');
  const body = Buffer.alloc(900 * 1024, 0x61);
  c.socket.write(`PUT /api/v1/rigs/rig1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n`);
  const written = new Promise<Error | null | undefined>((resolve) => c.socket.write(body, resolve));
  const res = await c.next();
  t.deepEqual([res.status, res.headers['connection']], [403, 'close'], '403 (not on the VPN) with Connection: close');
  t.equal(await written, null, 'the whole body was written');
  c.socket.end();
  await c.closed;
  t.notOk(c.events.some((e) => e.startsWith('error')), `no socket error (${c.events.join(', ')})`);
});

test('the server still answers; small bodies keep the connection alive', async (t) => {
  const c = rawClient();
  await c.connected;
  for (let i = 0; i < 3; i++) {
    c.socket.write(loginRequest('{"login":"ana","password":"wrong"}'));
    const r = await c.next();
    t.deepEqual([r.status, r.headers['connection']], [401, 'keep-alive'], `request ${i + 1}: 401, kept alive`);
  }
  c.socket.write('GET /api/v1/captures HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  const get = await c.next();
  t.deepEqual([get.status, get.headers['connection']], [401, 'keep-alive'], 'a GET: kept alive');
  c.socket.destroy();
});

test('teardown', async (t) => {
  await closeServer(t, s);
});
