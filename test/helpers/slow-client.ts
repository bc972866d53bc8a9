// HTTP clients that misbehave on purpose, from inside a network namespace (test/helpers/netns.ts):
// raw sockets that send a request's headers and a few body bytes and then nothing ('stall'), that
// send a body in pieces with pauses ('trickle'), or that reset the connection in the middle of a
// body ('reset'). The client runs in its own node process and reports what happens as events.
//
//   const c = slowClients(net, 'rig', [{ url, mode: 'stall', total: 1e6, head: 100 }]);
//   await c.until((e) => e.filter((x) => x.ev === 'closed').length === 1, 30_000);
//   c.stop();
import { spawn, type ChildProcess } from 'node:child_process';
import type { Hosts } from './netns.ts';

export interface SlowRequest {
  url: string;
  mode: 'stall' | 'trickle' | 'reset';
  /** Content-Length sent (none when absent: give a Transfer-Encoding in `headers`). */
  total?: number;
  /** stall, reset: body bytes sent before stopping. */
  head?: number;
  /** stall: these bytes (base64) instead of `head` bytes. */
  raw?: string;
  /** trickle: the body, base64 (its length should be `total`), sent in `pieces` pieces `everyMs` apart. */
  body?: string;
  pieces?: number;
  everyMs?: number;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

export interface SlowEvent {
  /** Index of the request. */
  i: number;
  /** 'sent' (stall/reset: headers and head written), 'reset', 'closed' (the connection ended). */
  ev: 'sent' | 'reset' | 'closed';
  /** Milliseconds since the request's last byte was written. */
  idle: number;
  /** The status line received, if any. */
  status?: string;
  /** The response as received (up to 2 KiB). */
  response?: string;
}

const SCRIPT = String.raw`
const net = require('node:net');
let input = '';
process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', () => {
  const reqs = JSON.parse(input);
  reqs.forEach((r, i) => {
    const u = new URL(r.url);
    let last = Date.now();
    const say = (o) => process.stdout.write(JSON.stringify({ i, idle: Date.now() - last, ...o }) + '\n');
    const sock = net.connect({ host: u.hostname, port: Number(u.port) });
    let got = '';
    sock.on('data', (d) => { got += d.toString('latin1'); });
    sock.on('error', () => {});
    sock.on('close', () => say({ ev: 'closed', status: got.split('\r\n')[0] || undefined, response: got.slice(0, 2048) }));
    sock.on('connect', () => {
      const extra = Object.entries(r.headers || {}).map(([k, v]) => k + ': ' + v + '\r\n').join('');
      const length = r.total === undefined ? '' : 'Content-Length: ' + r.total + '\r\n';
      sock.write('PUT ' + u.pathname + u.search + ' HTTP/1.1\r\nHost: ' + u.host + '\r\n' + length + extra + '\r\n');
      if (r.mode === 'trickle') {
        const body = Buffer.from(r.body, 'base64');
        const size = Math.ceil(body.length / r.pieces);
        let at = 0;
        const next = () => {
          if (at >= body.length || sock.destroyed) return;
          sock.write(body.subarray(at, at + size));
          at += size;
          last = Date.now();
          if (at < body.length) setTimeout(next, r.everyMs);
        };
        next();
        return;
      }
      sock.write(r.raw ? Buffer.from(r.raw, 'base64') : Buffer.alloc(r.head || 0, 0x61), () => {
        last = Date.now();
        say({ ev: 'sent' });
        if (r.mode === 'reset') setTimeout(() => { sock.resetAndDestroy(); say({ ev: 'reset' }); }, 100);
      });
    });
  });
});
`;

export interface SlowClients {
  events: SlowEvent[];
  /** Resolves with the events once `done(events)` holds; rejects after `timeoutMs`. */
  until(done: (events: SlowEvent[]) => boolean, timeoutMs: number): Promise<SlowEvent[]>;
  stop(): void;
}

export function slowClients(net: Hosts, host: string, reqs: SlowRequest[]): SlowClients {
  const child: ChildProcess = spawn('ip', ['netns', 'exec', net.host(host).ns, process.execPath, '-e', SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] });
  const events: SlowEvent[] = [];
  const waiters = new Set<() => void>();
  let buf = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buf += chunk.toString('utf8');
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      events.push(JSON.parse(buf.slice(0, nl)) as SlowEvent);
      buf = buf.slice(nl + 1);
    }
    for (const w of [...waiters]) w();
  });
  child.stdin!.end(JSON.stringify(reqs));
  return {
    events,
    until(done, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!done(events)) return;
          cleanup();
          resolve(events);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`slow clients: not done within ${timeoutMs} ms; events: ${JSON.stringify(events).slice(0, 2000)}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    stop() {
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
