// Rig reports during a login storm, as shipped: the latency of PUT /api/v1/rigs/:id while idle, then
// while 150 logins for distinct names (none throttled) are being hashed at the production work
// factor, same rigd, same run. bcrypt and sqlite3 share libuv's thread pool; rigd caps hashing
// (auth.hash_concurrency) so that the database keeps free threads.
// `bin/rigd serve` runs as its own process with the default config (request logging as shipped,
// into a file; bin/rigd's own UV_THREADPOOL_SIZE of 16 unless the bench's environment sets one).
// Set beside the defaults: auth.max_failures_per_client (30 by default: the 150 failed logins come
// from one address) and rigs.new_ids_per_address_per_hour (100 by default: 1,000 rig ids from one
// address). The rigs report from a rig network namespace (10.144.187.2, bench/storm/reporter.ts in
// a process of its own); the logins come from loopback, as an operator's CLI or browser does.
// Run by hand: npm run bench:login-storm (builds dist/; needs root and iproute2).
// Env: BENCH_IDLE_S (default 10), BENCH_CLIENTS (rigs reporting one after another, default 10),
// BENCH_LOGINS (default 150), BENCH_BCRYPT_COST (auth.bcrypt_cost; default: the config default, 12),
// BENCH_HASH_CONCURRENCY (auth.hash_concurrency; default: the config default), BENCH_KEEP=1.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { createHosts, type Hosts } from '../test/helpers/netns.ts';
import { rssKb } from './proc.ts';
import { servePid } from './serve/cpu.ts';
import { describeRun, loads } from './serve/describe.ts';
import { ROOT, startRigd } from './serve/rigd.ts';

const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 10);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 10);
const LOGINS = Number(process.env.BENCH_LOGINS ?? 150);
const COST = process.env.BENCH_BCRYPT_COST;
const HASH_CONCURRENCY = process.env.BENCH_HASH_CONCURRENCY;
const RIGS = 1000;
const GW = '10.144.187.1';
const RIG_ADDR = '10.144.187.2';

interface Phase {
  reports: number;
  failed: number;
  p50: number;
  p99: number;
  max: number;
  seconds: number;
}

/** The rigs reporting from the namespace for `length` seconds or until stop(). */
function reporting(net: Hosts, url: string, length: string) {
  const args = ['netns', 'exec', net.host('rigs').ns, process.execPath, '--import', 'tsx', path.join(ROOT, 'bench/storm/reporter.ts'), url, GW, String(CLIENTS), length, String(RIGS)];
  const child = spawn('ip', args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  const ready = new Promise<void>((resolve) => child.stderr.on('data', (d) => ((err += d), err.includes('reporting') && resolve())));
  const done = new Promise<Phase>((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as Phase) : reject(new Error(`reporter exited ${code}: ${err}`)))),
  );
  return { ready, done, stop: () => child.kill('SIGTERM') };
}

const fmt = (n: number, d = 1) => n.toFixed(d);
const line = (name: string, p: Phase) =>
  `${name} ${p.reports} reports in ${fmt(p.seconds)} s: p50 ${fmt(p.p50)} ms  p99 ${fmt(p.p99)} ms  max ${fmt(p.max)} ms  (non-200 or no answer: ${p.failed})\n`;

const work = mkdtempSync(path.join(tmpdir(), 'rigd-bench-storm-'));
const dataDir = path.join(work, 'data');
mkdirSync(dataDir);
const net = await createHosts([{ name: 'rigs', addr: RIG_ADDR, gw: GW }]);
let stopRigd = async () => {};
try {
  const env: Record<string, string> = { RIGD_AUTH_MAX_FAILURES_PER_CLIENT: '100000', RIGD_RIGS_NEW_IDS_PER_ADDRESS_PER_HOUR: '100000' };
  if (COST) env.RIGD_AUTH_BCRYPT_COST = COST;
  if (HASH_CONCURRENCY) env.RIGD_AUTH_HASH_CONCURRENCY = HASH_CONCURRENCY;
  if (process.env.UV_THREADPOOL_SIZE) env.UV_THREADPOOL_SIZE = process.env.UV_THREADPOOL_SIZE;
  const rigd = await startRigd({ dataDir, env, logFile: path.join(work, 'rigd.log') });
  stopRigd = async () => void (await rigd.stop());
  const pid = servePid(dataDir);
  const rigUrl = `http://${GW}:${rigd.port}`;
  const local = `http://127.0.0.1:${rigd.port}`;
  process.stdout.write(describeRun(rigd));
  process.stdout.write(
    `login storm: ${LOGINS} logins for distinct names from loopback, bcrypt cost ${COST ?? '12 (default)'}, hash_concurrency ${HASH_CONCURRENCY ?? '1 (default)'}, ` +
      `UV_THREADPOOL_SIZE ${process.env.UV_THREADPOOL_SIZE ?? '16 (bin/rigd)'}; ${CLIENTS} rigs reporting back to back from ${RIG_ADDR}\n`,
  );
  const login = (name: string) =>
    request(`${local}/api/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ login: name, password: 'wrong-password' }),
      headersTimeout: 0,
      bodyTimeout: 0,
    }).then(async (r) => (await r.body.text(), String(r.statusCode)));

  // Warm-up: JIT, connections, the rigs registered, the timing equaliser's hash.
  await reporting(net, rigUrl, '2').done;
  await login('warm');
  const idle = await reporting(net, rigUrl, String(IDLE_S)).done;

  const rssBefore = rssKb(pid);
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssKb(pid))), 20);
  const rigs = reporting(net, rigUrl, 'until-term');
  await rigs.ready;
  const statuses = new Map<string, number>();
  const stormStart = performance.now();
  await Promise.all(
    Array.from({ length: LOGINS }, (_, i) =>
      login(`storm${i}`)
        .catch((err: { code?: string }) => err.code ?? 'error')
        .then((status) => void statuses.set(status, (statuses.get(status) ?? 0) + 1)),
    ),
  );
  const stormS = (performance.now() - stormStart) / 1000;
  rigs.stop();
  const storm = await rigs.done;
  clearInterval(sampler);

  process.stdout.write(line('idle:       ', idle));
  process.stdout.write(line('login storm:', storm));
  const answers = [...statuses].map(([status, n]) => `${n} x ${status}`).join(', ');
  process.stdout.write(`the storm: ${LOGINS} logins answered in ${fmt(stormS)} s (${answers})\n`);
  process.stdout.write(`rigd serve RSS (pid ${pid}): ${Math.round(rssBefore / 1024)} MB before the storm, peak ${Math.round(rssPeak / 1024)} MB during it\n`);
  process.stdout.write(`load average at the end: ${loads()}\n`);
  process.stdout.write(`${JSON.stringify({ cost: Number(COST ?? 12), hashConcurrency: HASH_CONCURRENCY ?? null, uvThreadpool: process.env.UV_THREADPOOL_SIZE ?? null, idle, storm, stormS, logins: Object.fromEntries(statuses), rssBeforeKb: rssBefore, rssPeakKb: rssPeak })}\n`);
  process.exitCode = idle.failed === 0 && storm.failed === 0 ? 0 : 1;
} finally {
  await stopRigd();
  await net.destroy();
  if (process.env.BENCH_KEEP) process.stdout.write(`kept: ${work}\n`);
  else rmSync(work, { recursive: true, force: true });
}
