// test: alone (its SIGKILLed child must leave its namespace and veth behind until this file sweeps them: any other file's createHosts sweeps dead runs too)
// Self-test of test/helpers/netns.ts: real clients in network namespaces reach servers in this
// process from their own addresses, and nothing is left behind.
import test from 'tape';
import { rejects } from '../helpers/assert.ts';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHosts, type Hosts } from '../helpers/netns.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const childScript = path.join(here, 'fixtures', 'netns-child.ts');

function namespaces(): string[] {
  return execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.split(/\s+/)[0] ?? '')
    .filter(Boolean);
}

function linkExists(name: string): boolean {
  try {
    execFileSync('ip', ['link', 'show', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A server that answers with what it saw of the request, as JSON. */
async function echoServer(host: string): Promise<{ port: number; close: () => Promise<void> }> {
  // requireHostHeader off so that a request without Host reaches the handler.
  const server = http.createServer({ requireHostHeader: false }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.setHeader('x-echo', 'yes');
      res.end(
        JSON.stringify({
          remoteAddress: req.socket.remoteAddress,
          localAddress: req.socket.localAddress,
          method: req.method,
          url: req.url,
          host: req.headers.host ?? null,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port: 0 }, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function startChild(octet: number): Promise<{ pid: number; ns: string; hostIf: string; wait: Promise<number | null> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', childScript, String(octet)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const wait = new Promise<number | null>((r) => child.on('exit', (code, signal) => r(code ?? (signal ? -1 : null))));
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /^ready (\S+),(\S+)$/m.exec(out);
      if (m?.[1] && m[2]) resolve({ pid: child.pid!, ns: m[1], hostIf: m[2], wait });
      else if (/^error /m.test(out)) reject(new Error(out));
    });
    child.on('error', reject);
    void wait.then(() => reject(new Error(`child exited before ready: ${out}`)));
  });
}


let net: Hosts;

test('createHosts builds one namespace per host with a veth pair', async (t) => {
  net = await createHosts([
    { name: 'inside', addr: '10.144.250.2', gw: '10.144.250.1', extraAddrs: ['10.144.250.3'] },
    { name: 'outside', addr: '10.145.250.2', gw: '10.145.250.1' },
  ]);
  const { inside, outside } = net.hosts;
  t.ok(inside && outside, 'both hosts returned');
  t.equal(inside!.serverAddr, '10.144.250.1', 'serverAddr is the gateway');
  t.ok(inside!.ns.includes(String(process.pid)), 'namespace name carries the pid');
  t.ok(namespaces().includes(inside!.ns) && namespaces().includes(outside!.ns), 'namespaces exist');
  const rootSide = execFileSync('ip', ['-o', '-4', 'addr', 'show', 'dev', inside!.hostIf], { encoding: 'utf8' });
  t.match(rootSide, /inet 10\.144\.250\.1\/24/, 'root side of the veth has the gateway address');
  const nsSide = await net.exec('inside', ['ip', '-o', '-4', 'addr', 'show']);
  t.match(nsSide.stdout, /lo\s+inet 127\.0\.0\.1/, 'lo is up in the namespace');
  t.match(nsSide.stdout, /eth0\s+inet 10\.144\.250\.2\/24/, 'client address in the namespace');
  t.match(nsSide.stdout, /eth0\s+inet 10\.144\.250\.3\/24/, 'extra address in the namespace');
  const ping = await net.exec('inside', ['ping', '-c', '1', '-W', '60', '10.144.250.1']);
  if (ping.code !== 0 && /ENOENT|not found|No such file/.test(ping.stderr)) t.skip('ping not installed; reachability shown by HTTP below');
  else t.equal(ping.code, 0, 'gateway answers ping from the namespace');
});

test('server on :: sees the client IPv4-mapped; on 0.0.0.0 plain IPv4', async (t) => {
  const dual = await echoServer('::');
  const v4 = await echoServer('0.0.0.0');
  try {
    const a = await net.request('inside', { url: `http://10.144.250.1:${dual.port}/who` });
    t.equal(a.status, 200, 'dual-stack server answers');
    t.equal(JSON.parse(a.body).remoteAddress, '::ffff:10.144.250.2', 'dual stack: ::ffff:10.144.250.2');
    t.equal(JSON.parse(a.body).localAddress, '::ffff:10.144.250.1', 'dual stack: local side is the gateway, mapped');
    const b = await net.request('outside', { url: `http://10.145.250.1:${dual.port}/who` });
    t.equal(JSON.parse(b.body).remoteAddress, '::ffff:10.145.250.2', 'outside host seen as ::ffff:10.145.250.2');
    const c = await net.request('inside', { url: `http://10.144.250.1:${v4.port}/who` });
    t.equal(JSON.parse(c.body).remoteAddress, '10.144.250.2', '0.0.0.0 server: 10.144.250.2');
    const d = await net.request('outside', { url: `http://${net.hosts.outside!.serverAddr}:${v4.port}/who` });
    t.equal(JSON.parse(d.body).remoteAddress, '10.145.250.2', '0.0.0.0 server: 10.145.250.2');
    const e = await net.request('inside', { url: `http://10.144.250.1:${v4.port}/who`, localAddress: '10.144.250.3' });
    t.equal(JSON.parse(e.body).remoteAddress, '10.144.250.3', 'localAddress picks an extra address');
  } finally {
    await dual.close();
    await v4.close();
  }
});

test('request: any method, Host header and body; headers returned', async (t) => {
  const s = await echoServer('::');
  try {
    const r = await net.request('inside', {
      url: `http://10.144.250.1:${s.port}/api/v1/rigs/rig7?x=1`,
      method: 'PUT',
      headers: { Host: '10.144.evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'rig_serial=abc&branch=<b>',
    });
    const seen = JSON.parse(r.body);
    t.equal(seen.method, 'PUT', 'method sent');
    t.equal(seen.url, '/api/v1/rigs/rig7?x=1', 'path and query sent');
    t.equal(seen.host, '10.144.evil.example', 'Host header sent as given');
    t.equal(seen.body, 'rig_serial=abc&branch=<b>', 'body sent');
    t.equal(r.headers['x-echo'], 'yes', 'response headers returned (lower-case)');
    t.equal(r.headers['content-type'], 'application/json', 'content-type returned');
    t.ok(r.bodyBuffer.length > 0, 'bodyBuffer returned');
    const def = await net.request('inside', { url: `http://10.144.250.1:${s.port}/` });
    t.equal(JSON.parse(def.body).host, `10.144.250.1:${s.port}`, 'default Host is host:port of the URL');
    const none = await net.request('inside', { url: `http://10.144.250.1:${s.port}/`, omitHost: true });
    t.equal(JSON.parse(none.body).host, null, 'omitHost sends no Host header');
  } finally {
    await s.close();
  }
});

test('requestAll: 100 concurrent requests from one namespace', async (t) => {
  let inFlight = 0;
  let maxInFlight = 0;
  // Every request is held until more than 50 are open at once (requests sent one after another never
  // get there: they are let go after 60 s), however slowly a loaded machine opens them.
  let letGo!: () => void;
  const enough = new Promise<void>((resolve) => (letGo = resolve));
  const giveUp = setTimeout(() => letGo(), 60_000);
  const server = http.createServer((req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    if (inFlight > 50) letGo();
    void enough.then(() => {
      inFlight--;
      res.end(`${req.url} ${req.socket.remoteAddress}`);
    });
  });
  await new Promise<void>((r) => server.listen({ host: '::', port: 0 }, () => r()));
  const port = (server.address() as AddressInfo).port;
  try {
    const reqs = Array.from({ length: 100 }, (_, i) => ({ url: `http://10.144.250.1:${port}/r${i}`, method: 'PUT', body: `n=${i}` }));
    const res = await net.requestAll('inside', reqs);
    t.equal(res.length, 100, '100 answers');
    t.ok(res.every((r, i) => r.status === 200 && r.body === `/r${i} ::ffff:10.144.250.2`), 'answers in request order, from the client address');
    t.ok(maxInFlight > 50, `requests were concurrent (max in flight ${maxInFlight})`);
  } finally {
    clearTimeout(giveUp);
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('curl and exec helpers; network errors are reported, not thrown', async (t) => {
  const s = await echoServer('::');
  try {
    const c = await net.curl('outside', ['-X', 'POST', '-H', 'Host: vpn.rigs.internal', '--data', 'a=1', `http://10.145.250.1:${s.port}/c`]);
    t.equal(c.code, 0, 'curl exit 0');
    t.equal(c.status, 200, 'curl status parsed');
    const seen = JSON.parse(c.body);
    t.equal(seen.remoteAddress, '::ffff:10.145.250.2', 'curl from the client address');
    t.equal(seen.host, 'vpn.rigs.internal', 'curl Host header');
    t.equal(seen.body, 'a=1', 'curl body');
    const refused = await net.curl('inside', ['--max-time', '5', 'http://10.144.250.1:1/']);
    t.equal(refused.status, 0, 'curl status 0 on refused connection');
    t.notEqual(refused.code, 0, 'curl non-zero exit on refused connection');
    const r = await net.request('inside', { url: 'http://10.144.250.1:1/' });
    t.equal(r.status, 0, 'request status 0 on refused connection');
    t.equal(r.error, 'ECONNREFUSED', 'request reports ECONNREFUSED');
    const cat = await net.exec('inside', ['cat'], { input: 'hello\n' });
    t.deepEqual([cat.code, cat.stdout], [0, 'hello\n'], 'exec passes stdin and returns stdout');
    const fail = await net.exec('inside', ['sh', '-c', 'echo oops >&2; exit 7']);
    t.deepEqual([fail.code, fail.stderr], [7, 'oops\n'], 'exec returns exit code and stderr');
  } finally {
    await s.close();
  }
});

test('bad specs are refused with a clear error', async (t) => {
  await rejects(t, 
    createHosts([
      { name: 'a', addr: '10.144.249.2', gw: '10.144.249.1' },
      { name: 'b', addr: '10.144.249.3', gw: '10.144.249.1' },
    ]),
    /share 10\.144\.249\.0\/24/,
    'two hosts on one subnet',
  );
  await rejects(t, createHosts([{ name: 'a', addr: '10.144.248.2', gw: '10.144.9.1' }]), /not in 10\.144\.9\.0\/24/, 'addr outside the gw subnet');
  await rejects(t, 
    createHosts([{ name: 'again', addr: '10.144.250.9', gw: '10.144.250.1' }]),
    /already configured|already routed/,
    'a subnet in use by a live helper is refused',
  );
  await rejects(t, createHosts([{ name: 'bad name', addr: '10.144.248.2', gw: '10.144.248.1' }]), /host name/, 'bad host name');
});

test('not root, or no iproute2: a clear error, not a silent pass', async (t) => {
  const realGetuid = process.getuid;
  process.getuid = () => 1000;
  try {
    await rejects(t, createHosts([{ name: 'x', addr: '10.144.247.2', gw: '10.144.247.1' }]), /netns helper: network namespaces need root \(running as uid 1000\)/, 'non-root uid refused with a reason');
  } finally {
    process.getuid = realGetuid;
  }
  const realPath = process.env.PATH;
  process.env.PATH = '/nonexistent';
  try {
    await rejects(t, createHosts([{ name: 'x', addr: '10.144.247.2', gw: '10.144.247.1' }]), /netns helper: the `ip` command \(iproute2\) is not installed/, 'missing ip command refused with a reason');
  } finally {
    process.env.PATH = realPath;
  }
  t.notOk(namespaces().some((n) => n.includes('-x')), 'nothing created');
});

test('cleanup: SIGTERM cleans up; a SIGKILLed run is swept by the next createHosts', async (t) => {
  const a = await startChild(251);
  t.ok(namespaces().includes(a.ns), 'child created its namespace');
  process.kill(a.pid, 'SIGTERM');
  await a.wait;
  t.notOk(namespaces().includes(a.ns), 'SIGTERM: namespace removed by the exit handler');
  t.notOk(linkExists(a.hostIf), 'SIGTERM: veth removed');

  const b = await startChild(252);
  process.kill(b.pid, 'SIGKILL');
  await b.wait;
  t.ok(namespaces().includes(b.ns), 'SIGKILL leaves the namespace behind');
  t.ok(linkExists(b.hostIf), 'SIGKILL leaves the veth behind');
  const other = await createHosts([{ name: 'sweeper', addr: '10.144.246.2', gw: '10.144.246.1' }]);
  t.notOk(namespaces().includes(b.ns), 'next createHosts removed the dead run namespace');
  t.notOk(linkExists(b.hostIf), 'next createHosts removed the dead run veth');
  // The dead run's subnet is free again.
  const again = await createHosts([{ name: 'reuse', addr: '10.144.252.2', gw: '10.144.252.1' }]);
  t.ok(again.hosts.reuse, 'subnet of the dead run can be used again');
  await again.destroy();
  await other.destroy();
});

test('destroy removes everything and is idempotent', async (t) => {
  const { inside, outside } = net.hosts;
  await net.destroy();
  await net.destroy();
  t.notOk(namespaces().includes(inside!.ns), 'inside namespace gone');
  t.notOk(namespaces().includes(outside!.ns), 'outside namespace gone');
  t.notOk(linkExists(inside!.hostIf), 'inside veth gone');
  t.notOk(namespaces().some((n) => n.startsWith(`rigdt-${process.pid}-`)), 'no namespace of this process left');
  await rejects(t, net.exec('inside', ['true']), /after destroy/, 'exec after destroy throws');
});
