// Load for the export tests, each part in a process of its own: rigs reporting from a network
// namespace (latency of every report), and HTTP clients that read an export slowly, stall, or cut the
// connection. Both run until stop() and then report.
//
//   const rigs = reportingRigs(net, 'rigs', `http://10.144.15.1:${port}`, ['10.144.15.2', ...]);
//   const readers = slowReaders(url, token, 200);
//   ...; const { latencies } = await rigs.stop(); const { statuses } = await readers.stop();
import { spawn, type ChildProcess } from 'node:child_process';
import type { Hosts } from './netns.ts';

const RIGS = String.raw`
const http = require('node:http');
const [base, addrs, everyMs] = JSON.parse(process.argv[1]);
const latencies = [];
const failures = [];
const answered = addrs.map(() => false);
let stopping = false;
const agent = new http.Agent({ keepAlive: true });
function report(i) {
  if (stopping) return;
  const body = 'rig_serial=SN-' + i + '&gpsd_latitude=47.37&gpsd_longitude=8.54&software_version=3.1.0&git_branch=main';
  const started = process.hrtime.bigint();
  const req = http.request(base + '/api/v1/rigs/load-rig-' + i, { method: 'PUT', agent, localAddress: addrs[i],
    headers: { host: 'vpn.rigs.internal', 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } }, (res) => {
    res.resume();
    res.on('end', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      // A rig's first answer opens its connection (and may create the rig): warm-up, not timed.
      if (res.statusCode !== 200) failures.push(res.statusCode);
      else if (answered[i]) latencies.push(ms);
      answered[i] = true;
      setTimeout(() => report(i), everyMs);
    });
  });
  req.on('error', (e) => { failures.push(String(e.code || e.message)); setTimeout(() => report(i), everyMs); });
  req.end(body);
}
addrs.forEach((_, i) => report(i));
process.stdin.resume();
process.stdin.on('end', () => { stopping = true; setTimeout(() => { process.stdout.write(JSON.stringify({ latencies, failures })); process.exit(0); }, 200); });
`;

const READERS = String.raw`
const net = require('node:net');
const [host, port, path, token, count, everyMs] = JSON.parse(process.argv[1]);
const sockets = [];
const statuses = new Array(count).fill('');
const received = new Array(count).fill(0);
for (let i = 0; i < count; i++) {
  const sock = net.connect({ host, port });
  sockets.push(sock);
  sock.on('error', () => {});
  sock.on('data', (d) => {
    if (!statuses[i]) statuses[i] = d.toString('latin1').split('\r\n')[0];
    received[i] += d.length;
    sock.pause();
    // A third never reads again (stalled); the others take a chunk every everyMs.
    if (i % 3 !== 0) setTimeout(() => sock.resume(), everyMs);
  });
  sock.on('connect', () => sock.write('GET ' + path + ' HTTP/1.1\r\nHost: ' + host + ':' + port + '\r\nAuthorization: ' + token + '\r\n\r\n'));
}
process.stdout.write('started\n');
process.stdin.resume();
process.stdin.on('data', (d) => {
  // "cut": the even half go away in the middle of their answer.
  if (String(d).includes('cut')) sockets.forEach((s, i) => i % 2 === 0 && s.destroy());
});
process.stdin.on('end', () => {
  sockets.forEach((s) => s.destroy());
  process.stdout.write(JSON.stringify({ statuses, received }) + '\n');
  process.exit(0);
});
`;

function collect(child: ChildProcess): { output: () => string; exited: Promise<void> } {
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return { output: () => out, exited };
}

export interface ReportingRigs {
  stop(): Promise<{ latencies: number[]; failures: unknown[] }>;
}

/**
 * One rig per address of the namespace's host, each reporting again `everyMs` after its last answer.
 * Latencies leave out each rig's first answer (its connection's set-up); failures count them all.
 */
export function reportingRigs(net: Hosts, host: string, base: string, addrs: string[], everyMs = 100): ReportingRigs {
  const child = spawn('ip', ['netns', 'exec', net.host(host).ns, process.execPath, '-e', RIGS, JSON.stringify([base, addrs, everyMs])], { stdio: ['pipe', 'pipe', 'inherit'] });
  const c = collect(child);
  return {
    async stop() {
      child.stdin!.end();
      await c.exited;
      return JSON.parse(c.output());
    },
  };
}

export interface SlowReaders {
  /** Resolves once every connection is open and asked. */
  started: Promise<void>;
  /** The even half of the connections go away. */
  cut(): void;
  /** Closes every connection; the status line and the bytes each received. */
  stop(): Promise<{ statuses: string[]; received: number[] }>;
}

/** `count` raw connections asking GET `path` with `token`: a third stall, the others read a chunk every `everyMs`. */
export function slowReaders(url: string, path: string, token: string, count: number, everyMs = 500): SlowReaders {
  const u = new URL(url);
  const child = spawn(process.execPath, ['-e', READERS, JSON.stringify([u.hostname, Number(u.port), path, token, count, everyMs])], { stdio: ['pipe', 'pipe', 'inherit'] });
  const c = collect(child);
  const started = new Promise<void>((resolve) => {
    const check = () => (c.output().includes('started\n') ? resolve() : setTimeout(check, 20));
    check();
  });
  return {
    started,
    cut: () => child.stdin!.write('cut\n'),
    async stop() {
      child.stdin!.end();
      await c.exited;
      return JSON.parse(c.output().split('\n')[1]!);
    },
  };
}
