// CPU per rig report: what rigd's process spends (all its threads: the event loop, SQLite's work on
// libuv's pool, GC) per PUT /api/v1/rigs/:id, against a bare hapi PUT route answering "Ok", measured
// the same way in the same run. On a CPU-bound machine req/s is about the inverse of CPU per
// request, and unlike req/s the CPU a request costs hardly moves when other work shares the machine.
// Run by hand: npm run bench:report-cpu
//
// The load generator (bench/tail/load.ts, autocannon) runs in a child process, so its CPU is not
// counted; the VPN rule runs (vpn.cidr 127.0.0.0/8 and Host 127.0.0.1: loopback passes it, bench
// only). Rounds alternate between the targets; the table gives the median of the rounds.
//   - bare: the bare hapi route (bench/tail/bare.ts)
//   - route only: rigd's report route with the store call replaced by the validation alone (what the
//     request costs without its write)
//   - report: rigd's report route, written and committed (group commit)
//   - store only: RigService.report called in process by 100 callers at once, no HTTP (the write
//     path's own cost: validation, group commit, SQLite)
// Env: BENCH_REQUESTS (per round, default 20000), BENCH_ROUNDS (default 5), BENCH_CONNECTIONS (100),
// BENCH_ONLY (a comma list of bare, route, report, store: only those), BENCH_LOG=1 (the request log at level info into /dev/null instead of silent).
// With `node --cpu-prof --import tsx bench/report-cpu.ts` the profile covers the whole run.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load.ts';
import { createLogger, silentLogger } from '../src/log.ts';
import { createServer } from '../src/server/server.ts';
import { openApp } from '../src/services/app.ts';
import { parseRigReport } from '../src/services/rigs/report-input.ts';
import { bareServer } from './tail/bare.ts';
import type { LoadRun } from './tail/run.ts';

// As `rigd serve` runs (bin/rigd: built JavaScript, no source maps).
process.setSourceMapsEnabled(false);

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const RIGS = 1000;

type Run = LoadRun;

function load(url: string, amount: number): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/tail/load.ts'), url, '127.0.0.1', String(CONNECTIONS), `n${amount}`, String(RIGS)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  return new Promise<Run>((resolve, reject) => child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as Run) : reject(new Error(`load exited ${code}: ${out}`)))));
}

/**
 * CPU time of this process's main thread (the event loop) in µs, from /proc (Linux; clock ticks of
 * 10 ms, fine over runs of seconds). Unlike the event loop's utilisation it does not count the time
 * the thread waits for a CPU on a busy machine.
 */
function loopCpuUs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat(5); fields[0] here is field 3.
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

/**
 * Runs `amount` requests against url, measuring this process's CPU until the child exits (the
 * child's own start costs this process nothing but a few idle timers).
 */
async function measure(url: string | null, amount: number): Promise<{ run: Run; cpuUs: number; loopUs: number }> {
  const cpu0 = process.cpuUsage();
  const loop0 = loopCpuUs();
  const run = url ? await load(url, amount) : await storeOnly(amount);
  const cpu = process.cpuUsage(cpu0);
  return { run, cpuUs: cpu.user + cpu.system, loopUs: loopCpuUs() - loop0 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dataDir = mkdtempSync(path.join(tmpdir(), 'rigd-bench-cpu-'));
const { config } = loadConfig({ env: {}, overrides: { data_dir: dataDir, vpn: { cidr: '127.0.0.0/8' }, log: { level: process.env.BENCH_LOG ? 'info' : 'silent' }, rigs: { new_ids_per_address_per_hour: 10_000_000 } } });
const log = process.env.BENCH_LOG ? createLogger('info', () => undefined) : silentLogger;
const app = await openApp(config, { log });
const rigd = await createServer(app, { host: '127.0.0.1', port: 0, log });
await app.start();
await rigd.start();
const bare = await bareServer();

const realReport = app.rigs.report.bind(app.rigs);
const routeOnly = async (rawId: string, payload: unknown) => {
  parseRigReport(rawId, payload);
};

/** Reports submitted straight to the service by CONNECTIONS callers, each awaiting its answer. */
async function storeOnly(amount: number): Promise<Run> {
  const body = { rig_serial: 'SN-0042', gpsd_latitude: '47.376887', gpsd_longitude: '8.541694', local_ip: '192.168.8.20', software_version: '3.1.0', git_branch: 'main' };
  let next = 0;
  const t0 = performance.now();
  const caller = async () => {
    while (next < amount) {
      const n = next++;
      await app.rigs.report(`rig${n % RIGS}`, { ...body }, '127.0.0.1');
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, caller));
  return { rps: amount / ((performance.now() - t0) / 1000), p50: 0, p99: 0, max: 0, ok: amount, non2xx: 0, errors: 0, timeouts: 0 };
}

interface Target {
  name: string;
  /** Where the load goes, or null: storeOnly(). */
  url: string | null;
  setup: () => void;
  rounds: { cpuPerReq: number; loopPerReq: number; rps: number; p99: number; failures: number }[];
}
const allTargets: (Target & { key: string })[] = [
  { key: 'bare', name: 'bare hapi PUT', url: `http://127.0.0.1:${bare.info.port}`, setup: () => undefined, rounds: [] },
  { key: 'route', name: 'rigd route only (no write)', url: `http://127.0.0.1:${rigd.info.port}`, setup: () => (app.rigs.report = routeOnly), rounds: [] },
  { key: 'report', name: 'rigd report (written)', url: `http://127.0.0.1:${rigd.info.port}`, setup: () => (app.rigs.report = realReport), rounds: [] },
  { key: 'store', name: 'store only (no HTTP)', url: null, setup: () => (app.rigs.report = realReport), rounds: [] },
];
const only = process.env.BENCH_ONLY?.split(',');
const targets = only ? allTargets.filter((t) => only.includes(t.key)) : allTargets;

try {
  const l0 = loadavg();
  process.stdout.write(
    `report CPU: ${REQUESTS} requests x ${ROUNDS} rounds per target, ${CONNECTIONS} connections over loopback, ${RIGS} rigs, ${cpus().length} CPUs, node ${process.version}, request log ${process.env.BENCH_LOG ? 'info' : 'silent'}, load average ${l0.map((l) => l.toFixed(2)).join(' ')}\n`,
  );
  // Warm-up: JIT, the 1,000 rigs registered.
  for (const t of targets) {
    t.setup();
    await measure(t.url, Math.max(2000, REQUESTS / 4));
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) {
      t.setup();
      await app.db.writes.drain();
      const { run, cpuUs, loopUs } = await measure(t.url, REQUESTS);
      const answered = run.ok + run.non2xx;
      t.rounds.push({ cpuPerReq: cpuUs / answered, loopPerReq: loopUs / answered, rps: run.rps, p99: run.p99, failures: run.non2xx + run.errors + run.timeouts });
    }
  }
  const bareCpu = median((targets.find((t) => t.key === 'bare') ?? targets[0]).rounds.map((r) => r.cpuPerReq));
  const pad = (s: string, n: number) => s.padEnd(n);
  process.stdout.write(`\n| ${pad('target', 28)} | CPU µs/request (median; rounds)        | vs bare | main thread µs/req | req/s (median) | p99 ms | failures |\n`);
  process.stdout.write(`|${'-'.repeat(30)}|${'-'.repeat(40)}|---------|--------------------|----------------|--------|----------|\n`);
  for (const t of targets) {
    const cpu = median(t.rounds.map((r) => r.cpuPerReq));
    const each = t.rounds.map((r) => r.cpuPerReq.toFixed(0)).join(' ');
    process.stdout.write(
      `| ${pad(t.name, 28)} | ${pad(`${cpu.toFixed(0)} (${each})`, 38)} | ${pad(`${(cpu / bareCpu).toFixed(2)} x`, 7)} | ${pad(median(t.rounds.map((r) => r.loopPerReq)).toFixed(0), 18)} | ${pad(median(t.rounds.map((r) => r.rps)).toFixed(0), 14)} | ${pad(String(median(t.rounds.map((r) => r.p99))), 6)} | ${pad(String(t.rounds.reduce((s, r) => s + r.failures, 0)), 8)} |\n`,
    );
  }
  const report = median((targets.find((t) => t.key === 'report') ?? targets[targets.length - 1]).rounds.map((r) => r.cpuPerReq));
  process.stdout.write(`\nbare / report CPU per request: ${(bareCpu / report).toFixed(2)} (the req/s ratio a CPU-bound machine would give); load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
} finally {
  app.rigs.report = realReport;
  await bare.stop();
  await rigd.stop({ timeout: 2000 });
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
}
