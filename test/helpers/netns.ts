// Real client hosts for tests: one network namespace per host, joined to the root namespace by a
// veth pair. The root side of the pair carries the host's gateway address (where the client
// reaches servers running in the test process), the namespace side the client address. A server
// bound on `::` in the root namespace then sees the client as `::ffff:<addr>`, one bound on
// `0.0.0.0` as `<addr>`.
//
// Only addresses on this machine's own namespaces are ever contacted. Needs root and iproute2;
// anything else throws (a test that cannot build its network must fail, never pass silently).
//
//   const net = await createHosts([
//     { name: 'inside', addr: '10.144.7.2', gw: '10.144.7.1' },
//     { name: 'outside', addr: '10.145.7.2', gw: '10.145.7.1' },
//   ]);
//   const res = await net.request('inside', { url: `http://${net.hosts.inside.serverAddr}:${port}/x`,
//     method: 'PUT', headers: { host: 'vpn.rigs.internal' }, body: 'rig_serial=1' });
//   await net.destroy();
import { execFileSync, spawn } from 'node:child_process';
import { isIPv4 } from 'node:net';
import type { IncomingHttpHeaders } from 'node:http';

export interface HostSpec {
  /** Key used to refer to the host in this test (letters, digits, '-', '_'). */
  name: string;
  /** Client address inside the namespace. */
  addr: string;
  /** Gateway address: set on the root side of the veth pair; servers in the test process are reached here. */
  gw: string;
  /** Prefix length of the link between addr and gw (default 24). */
  prefix?: number;
  /** More client addresses on the same link inside the namespace (e.g. many rigs from one namespace). */
  extraAddrs?: string[];
}

export interface Host {
  name: string;
  /** Namespace name, for `ip netns exec`. */
  ns: string;
  addr: string;
  /** Where this client reaches the root namespace (the gateway address). */
  serverAddr: string;
  /** All client addresses in the namespace (addr first, then extraAddrs). */
  addrs: string[];
  /** Name of the root-namespace side of the veth pair. */
  hostIf: string;
}

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ExecOptions {
  input?: string | Buffer;
  /** Kill the command after this many ms (default 60000: generous, a busy machine is slow); code is then 124. */
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

export interface CurlResult extends ExecResult {
  /** HTTP status, 0 when curl got no answer. */
  status: number;
  /** Response body (curl's stdout without the status trailer). */
  body: string;
}

export interface HttpRequest {
  /** Full URL, e.g. http://10.144.7.1:3000/rigs. The Host header defaults to its host:port. */
  url: string;
  method?: string;
  /** Any headers, Host included (node:http sends exactly what is given). */
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  /** Send no Host header at all. */
  omitHost?: boolean;
  /** Source address inside the namespace (one of the host's addrs); default: the kernel's choice (addr). */
  localAddress?: string;
  /** Per-request timeout in ms (default 30000: generous, a busy machine is slow). */
  timeoutMs?: number;
}

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** Raw header pairs as received, in order. */
  rawHeaders: string[];
  body: string;
  /** Body bytes, for non-text answers. */
  bodyBuffer: Buffer;
  /** Set (and status 0) when the request failed on the network level, e.g. 'ECONNREFUSED'. */
  error?: string;
}

export interface Hosts {
  hosts: Record<string, Host>;
  /** Shortcut: hosts[name], throws on an unknown name. */
  host(name: string): Host;
  /** Runs argv inside the host's namespace (`ip netns exec <ns> ...argv`). */
  exec(host: string, argv: string[], opts?: ExecOptions): Promise<ExecResult>;
  /** Runs curl inside the namespace with `-sS -o - -w <status>` plus args; status parsed out. */
  curl(host: string, args: string[], opts?: ExecOptions): Promise<CurlResult>;
  /** One HTTP request from inside the namespace (a node one-shot script using node:http). */
  request(host: string, req: HttpRequest): Promise<HttpResponse>;
  /** Many HTTP requests at once from one node process inside the namespace, all started together
   * (or at most `concurrency` in flight); answers in the order of the requests. */
  requestAll(host: string, reqs: HttpRequest[], opts?: { concurrency?: number }): Promise<HttpResponse[]>;
  /** Removes the namespaces and veth pairs. Idempotent; also runs on process exit and SIGINT/SIGTERM. */
  destroy(): Promise<void>;
}

const NS_PREFIX = 'rigdt-';
const IF_PREFIX = 'rgd';
const NS_RE = /^rigdt-(\d+)-/;
const IF_RE = /^rgd([0-9a-z]{1,6})-[0-9a-z]+-[0-9a-z]+$/;
const NAME_RE = /^[A-Za-z0-9_-]{1,32}$/;

let seq = 0;
const live = new Set<Instance>();
let handlersInstalled = false;

class NetnsError extends Error {
  constructor(message: string) {
    super(`netns helper: ${message}`);
    this.name = 'NetnsError';
  }
}

/** Synchronous `ip ...`; throws a NetnsError with ip's stderr. */
function ipSync(args: string[]): string {
  try {
    return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string; status?: number };
    if (e.code === 'ENOENT') throw new NetnsError('the `ip` command (iproute2) is not installed');
    throw new NetnsError(`\`ip ${args.join(' ')}\` failed (exit ${e.status ?? '?'}): ${(e.stderr ?? e.message).trim()}`);
  }
}

function ipQuiet(args: string[]): void {
  try {
    execFileSync('ip', args, { stdio: 'ignore' });
  } catch {
    // already gone
  }
}

function pidAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function listNamespaces(): string[] {
  return ipSync(['netns', 'list'])
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter(Boolean);
}

function listLinks(): string[] {
  const out = ipSync(['-o', 'link', 'show']);
  const names: string[] = [];
  for (const line of out.split('\n')) {
    const m = /^\d+:\s+([^:@\s]+)/.exec(line);
    if (m?.[1]) names.push(m[1]);
  }
  return names;
}

/** Removes namespaces and veth ends left by test processes that died without cleaning up. */
export function cleanupStale(): string[] {
  const removed: string[] = [];
  for (const ns of listNamespaces()) {
    const m = NS_RE.exec(ns);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pidAlive(pid) && !(pid === process.pid && !ownedNamespaces().has(ns))) continue;
    ipQuiet(['netns', 'del', ns]);
    removed.push(ns);
  }
  for (const link of listLinks()) {
    const m = IF_RE.exec(link);
    if (!m?.[1]) continue;
    const pid = parseInt(m[1], 36);
    if (pidAlive(pid) && !(pid === process.pid && !ownedLinks().has(link))) continue;
    ipQuiet(['link', 'del', link]);
    removed.push(link);
  }
  return removed;
}

function ownedNamespaces(): Set<string> {
  const s = new Set<string>();
  for (const inst of live) for (const h of Object.values(inst.hosts)) s.add(h.ns);
  return s;
}

function ownedLinks(): Set<string> {
  const s = new Set<string>();
  for (const inst of live) for (const h of Object.values(inst.hosts)) s.add(h.hostIf);
  return s;
}

function ipv4ToInt(a: string): number {
  return a.split('.').reduce((n, o) => n * 256 + Number(o), 0);
}

function sameNet(a: string, b: string, prefix: number): boolean {
  if (prefix === 0) return true;
  const shift = 32 - prefix;
  return Math.floor(ipv4ToInt(a) / 2 ** shift) === Math.floor(ipv4ToInt(b) / 2 ** shift);
}

function netOf(a: string, prefix: number): string {
  const shift = 32 - prefix;
  const n = Math.floor(ipv4ToInt(a) / 2 ** shift) * 2 ** shift;
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.') + `/${prefix}`;
}

/** Addresses already configured in the root namespace, with their device. */
function rootAddresses(): Map<string, string> {
  const out = ipSync(['-o', '-4', 'addr', 'show']);
  const map = new Map<string, string>();
  for (const line of out.split('\n')) {
    const m = /^\d+:\s+(\S+)\s+inet\s+([\d.]+)\//.exec(line);
    if (m?.[1] && m[2]) map.set(m[2], m[1]);
  }
  return map;
}

/** Routes in the root namespace whose destination (not default) covers addr. */
function coveringRoutes(addr: string): string[] {
  const out = ipSync(['-o', '-4', 'route', 'show', 'table', 'all']);
  const hits: string[] = [];
  for (const line of out.split('\n')) {
    const m = /^(?:(?:unicast|local|broadcast)\s+)?([\d.]+)(?:\/(\d+))?\s/.exec(line);
    if (!m?.[1]) continue;
    const prefix = m[2] === undefined ? 32 : Number(m[2]);
    if (prefix > 0 && sameNet(m[1], addr, prefix)) hits.push(line.trim());
  }
  return hits;
}

function validate(specs: HostSpec[]): void {
  if (!Array.isArray(specs) || specs.length === 0) throw new NetnsError('createHosts needs at least one host spec');
  const names = new Set<string>();
  const nets = new Map<string, string>();
  for (const s of specs) {
    if (!NAME_RE.test(s.name)) throw new NetnsError(`host name ${JSON.stringify(s.name)} must match ${NAME_RE}`);
    if (names.has(s.name)) throw new NetnsError(`host name ${s.name} given twice`);
    names.add(s.name);
    const prefix = s.prefix ?? 24;
    if (!Number.isInteger(prefix) || prefix < 8 || prefix > 30) throw new NetnsError(`${s.name}: prefix must be 8..30`);
    for (const a of [s.addr, s.gw, ...(s.extraAddrs ?? [])]) {
      if (!isIPv4(a)) throw new NetnsError(`${s.name}: ${JSON.stringify(a)} is not an IPv4 address`);
      if (!sameNet(a, s.gw, prefix)) throw new NetnsError(`${s.name}: ${a} is not in ${netOf(s.gw, prefix)}`);
    }
    const all = [s.addr, ...(s.extraAddrs ?? [])];
    if (all.includes(s.gw)) throw new NetnsError(`${s.name}: client address equals the gateway ${s.gw}`);
    const net = netOf(s.gw, prefix);
    const other = nets.get(net);
    if (other) throw new NetnsError(`${s.name} and ${other} share ${net}: give each host its own subnet (or use extraAddrs)`);
    nets.set(net, s.name);
  }
}

function runCapture(cmd: string, args: string[], opts: ExecOptions = {}): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], env: opts.env ?? process.env });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs ?? 60_000);
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new NetnsError(`cannot run ${cmd}: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        code: timedOut ? 124 : (code ?? (signal ? 128 : 1)),
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8') + (timedOut ? `\n[killed after ${opts.timeoutMs ?? 60_000} ms]` : ''),
      });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input ?? '');
  });
}

// Runs inside the namespace: reads {reqs, concurrency} as JSON on stdin, writes the answers as JSON.
const REQUEST_SCRIPT = String.raw`
const http = require('node:http');
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', async () => {
  const { reqs, concurrency } = JSON.parse(input);
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const one = (r) => new Promise((resolve) => {
    const u = new URL(r.url);
    const headers = {};
    for (const [k, v] of Object.entries(r.headers || {})) headers[k] = v;
    const body = r.body == null ? null : Buffer.from(r.body, 'base64');
    const hasLen = Object.keys(headers).some((k) => k.toLowerCase() === 'content-length');
    if (body && !hasLen) headers['content-length'] = String(body.length);
    const req = http.request({
      agent, host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port || 80, path: u.pathname + u.search,
      method: r.method || 'GET', headers, setHost: !r.omitHost, localAddress: r.localAddress || undefined,
      timeout: r.timeoutMs || 30_000,
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, rawHeaders: res.rawHeaders,
        body: Buffer.concat(chunks).toString('base64') }));
      res.on('error', (e) => resolve({ status: 0, headers: {}, rawHeaders: [], body: '', error: e.code || e.message }));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', (e) => resolve({ status: 0, headers: {}, rawHeaders: [], body: '', error: e.code || e.message }));
    req.end(body || undefined);
  });
  const out = new Array(reqs.length);
  let next = 0;
  const worker = async () => { while (next < reqs.length) { const i = next++; out[i] = await one(reqs[i]); } };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency || reqs.length, reqs.length)) }, worker));
  process.stdout.write(JSON.stringify(out));
});
`;

class Instance implements Hosts {
  hosts: Record<string, Host> = {};
  private destroyed = false;

  host(name: string): Host {
    const h = this.hosts[name];
    if (!h) throw new NetnsError(`unknown host ${JSON.stringify(name)} (have: ${Object.keys(this.hosts).join(', ')})`);
    return h;
  }

  exec(host: string, argv: string[], opts: ExecOptions = {}): Promise<ExecResult> {
    if (this.destroyed) return Promise.reject(new NetnsError('exec after destroy()'));
    if (argv.length === 0) return Promise.reject(new NetnsError('exec needs a command'));
    const h = this.host(host);
    return runCapture('ip', ['netns', 'exec', h.ns, ...argv], opts);
  }

  async curl(host: string, args: string[], opts: ExecOptions = {}): Promise<CurlResult> {
    const marker = '\n--rigd-curl-status:';
    const r = await this.exec(host, ['curl', '-sS', '-o', '-', '-w', `${marker}%{http_code}`, '--noproxy', '*', ...args], opts);
    const at = r.stdout.lastIndexOf(marker);
    if (at < 0) return { ...r, status: 0, body: r.stdout };
    return { ...r, status: Number(r.stdout.slice(at + marker.length).trim()) || 0, body: r.stdout.slice(0, at) };
  }

  async request(host: string, req: HttpRequest): Promise<HttpResponse> {
    const [res] = await this.requestAll(host, [req]);
    return res!;
  }

  async requestAll(host: string, reqs: HttpRequest[], opts: { concurrency?: number } = {}): Promise<HttpResponse[]> {
    if (reqs.length === 0) return [];
    const payload = {
      concurrency: opts.concurrency ?? reqs.length,
      reqs: reqs.map((r) => ({
        ...r,
        body: r.body === undefined ? null : Buffer.from(r.body).toString('base64'),
      })),
    };
    const maxTimeout = Math.max(...reqs.map((r) => r.timeoutMs ?? 30_000));
    const r = await this.exec(host, [process.execPath, '-e', REQUEST_SCRIPT], {
      input: JSON.stringify(payload),
      timeoutMs: maxTimeout * Math.ceil(reqs.length / payload.concurrency) + 10_000,
    });
    if (r.code !== 0) throw new NetnsError(`request script in ${this.host(host).ns} failed (exit ${r.code}): ${r.stderr.trim()}`);
    const raw = JSON.parse(r.stdout) as Array<Omit<HttpResponse, 'bodyBuffer'>>;
    return raw.map((x) => {
      const buf = Buffer.from(x.body, 'base64');
      return { ...x, body: buf.toString('utf8'), bodyBuffer: buf };
    });
  }

  destroySync(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const h of Object.values(this.hosts)) {
      ipQuiet(['netns', 'del', h.ns]);
      ipQuiet(['link', 'del', h.hostIf]);
    }
    live.delete(this);
  }

  async destroy(): Promise<void> {
    this.destroySync();
  }
}

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  const cleanAll = () => {
    for (const inst of [...live]) inst.destroySync();
  };
  process.on('exit', cleanAll);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      cleanAll();
      // Let the default action (termination by that signal) happen as without our handler.
      process.kill(process.pid, sig);
    });
  }
}

/** Fails with a clear message when namespaces cannot be made here. */
export function assertNetnsAvailable(): void {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new NetnsError(`network namespaces need root (running as uid ${process.getuid()}); run the tests as root`);
  }
  listNamespaces();
}

export async function createHosts(specs: HostSpec[]): Promise<Hosts> {
  validate(specs);
  assertNetnsAvailable();
  cleanupStale();

  // The root namespace must not already route these subnets (a live parallel test, or a real
  // interface such as the VPN's own): adding our link would steal or lose the traffic.
  const addrs = rootAddresses();
  for (const s of specs) {
    const prefix = s.prefix ?? 24;
    const dev = addrs.get(s.gw);
    if (dev) throw new NetnsError(`${s.gw} is already configured on ${dev} in the root namespace (another test process using the same subnet?)`);
    for (const a of [s.addr, ...(s.extraAddrs ?? [])]) {
      const routes = coveringRoutes(a);
      if (routes.length) {
        throw new NetnsError(`${a} (${s.name}) is already routed in the root namespace: ${routes.join(' | ')}; pick a subnet other than ${netOf(s.gw, prefix)}`);
      }
    }
  }

  installHandlers();
  const inst = new Instance();
  live.add(inst);
  const run = seq++;
  try {
    specs.forEach((s, i) => {
      const prefix = s.prefix ?? 24;
      const ns = `${NS_PREFIX}${process.pid}-${run}-${s.name}`;
      const hostIf = `${IF_PREFIX}${process.pid.toString(36)}-${run.toString(36)}-${i.toString(36)}`;
      const host: Host = { name: s.name, ns, addr: s.addr, serverAddr: s.gw, addrs: [s.addr, ...(s.extraAddrs ?? [])], hostIf };
      inst.hosts[s.name] = host;
      ipSync(['netns', 'add', ns]);
      // The peer is created directly inside the namespace: no moment where it sits in the root namespace.
      ipSync(['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
      ipSync(['addr', 'add', `${s.gw}/${prefix}`, 'dev', hostIf]);
      ipSync(['link', 'set', hostIf, 'up']);
      ipSync(['-n', ns, 'link', 'set', 'lo', 'up']);
      ipSync(['-n', ns, 'addr', 'add', `${s.addr}/${prefix}`, 'dev', 'eth0']);
      for (const a of s.extraAddrs ?? []) ipSync(['-n', ns, 'addr', 'add', `${a}/${prefix}`, 'dev', 'eth0']);
      ipSync(['-n', ns, 'link', 'set', 'eth0', 'up']);
      ipSync(['-n', ns, 'route', 'add', 'default', 'via', s.gw]);
    });
  } catch (err) {
    inst.destroySync();
    throw err;
  }
  return inst;
}
