// Rig reports as shipped against a bare hapi PUT route, same client, same run. One command, one table:
//   npm run bench:report-tail -- [--engine sqlite|postgres]
// (builds dist/ first). `bin/rigd serve` runs as its own process with the default config (a temporary
// data_dir; on PostgreSQL a throwaway cluster's database as database.url) and request logging as
// shipped, its stdout into a file as the journal would take it. The bare route
// (bench/serve/baseline-server.ts) runs in a process of its own. The client, autocannon with 100
// connections over 1,000 rig ids and the seed's report body, runs in a rig network namespace
// (10.144.46.0/24) against both. Printed: req/s, p50/p99, errors, the ratio, history rows == 2xx,
// rigd's event-loop delay and COMMIT times from its /metrics, CPU per request (rigd's main thread
// apart; beside it the client's, PostgreSQL's and the whole machine's, against what the machine's
// CPUs allow at 0.5 x) and rigd's RSS, the machine's load, the command lines.
// One config key is set beside the defaults: rigs.new_ids_per_address_per_hour (100 by default; the
// run registers 1,000 rig ids from one address).
// Env: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 100), BENCH_RIGS (default 1000),
// BENCH_CPU_PROF (a directory: rigd runs with --cpu-prof there; docs/perf/report-path.md),
// BENCH_RIGD_ENV (more of rigd's environment, "K=V K=V": e.g. RIGD_LOG_REPORTS=each to compare),
// BENCH_NODE_FLAGS (node flags for rigd, e.g. --trace-gc), BENCH_KEEP=1 (keep rigd's data_dir and log),
// BENCH_SUBNET (the third octet of the rig network, default 46: two runs at once need two).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createHosts } from '../test/helpers/netns.ts';
import { startBaseline } from './serve/baseline.ts';
import { engineFlag, openEngine } from './serve/engine.ts';
import { failures, loadRun, type LoadSpec } from './serve/load.ts';
import { startRigd } from './serve/rigd.ts';
import { countReports, settledCount } from './serve/rows.ts';
import { cpuMs, machineBusyMs, rssMiB, servePid, threadCpuMs, treeCpuMs } from './serve/cpu.ts';
import { delta } from './tail/probes.ts';
import { renderTable, type Check } from './tail/table.ts';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const RIGS = Number(process.env.BENCH_RIGS ?? 1000);
const PROFILE = process.env.BENCH_CPU_PROF;
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
const EXTRA_ENV = Object.fromEntries((process.env.BENCH_RIGD_ENV ?? '').split(/\s+/).filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
const SUBNET = Number(process.env.BENCH_SUBNET ?? 46);
const GW = `10.144.${SUBNET}.1`;
const RIG_ADDR = `10.144.${SUBNET}.2`;
const engine = engineFlag(process.argv.slice(2));
const loads = () => loadavg().map((l) => l.toFixed(2)).join(' ');

const work = mkdtempSync(path.join(tmpdir(), 'rigd-bench-tail-'));
const dataDir = path.join(work, 'data');
const db = await openEngine(engine, 'rigd_bench_tail');
const net = await createHosts([{ name: 'rigs', addr: RIG_ADDR, gw: GW }]);
const spec: LoadSpec = { net, from: 'rigs', host: GW, connections: CONNECTIONS, rigs: RIGS };
let stopRigd = async () => {};
let stopBare = async () => {};
try {
  mkdirSync(dataDir);
  const rigd = await startRigd({
    dataDir,
    databaseUrl: db.url,
    env: { RIGD_RIGS_NEW_IDS_PER_ADDRESS_PER_HOUR: '10000000', ...EXTRA_ENV },
    logFile: path.join(work, 'rigd.log'),
    nodeFlags: PROFILE || NODE_FLAGS.length ? [...NODE_FLAGS, ...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(PROFILE)}`] : [])] : undefined,
  });
  stopRigd = async () => void (await rigd.stop());
  const bare = await startBaseline(GW);
  stopBare = () => bare.stop();
  const rigdUrl = `http://${GW}:${rigd.port}`;
  const bareUrl = `http://${GW}:${bare.port}`;
  const metrics = async () => (await fetch(`http://127.0.0.1:${rigd.port}/metrics`)).text();

  const load0 = loads();
  process.stdout.write(`report tail (${db.label}): ${CONNECTIONS} connections from ${RIG_ADDR} (network namespace), ${RIGS} rigs, ${DURATION} s runs, ${cpus().length} CPUs, node ${process.version}, load average ${load0}\n`);
  process.stdout.write(`command: node ${[...process.execArgv, ...process.argv.slice(1)].map((a) => (a.startsWith('/') ? path.relative(process.cwd(), a) : a)).join(' ')}\nrigd:    ${rigd.command}\n`);
  // Warm-up: JIT, connections, the rig ids registered (their first insert is not the steady state).
  await loadRun(spec, bareUrl, '2');
  const warm = await loadRun(spec, rigdUrl, '3');

  const bareCpu0 = cpuMs(bare.pid);
  const bareMachine0 = machineBusyMs();
  const bareStarted = performance.now();
  const b = await loadRun(spec, bareUrl, String(DURATION));
  const bareWallMs = performance.now() - bareStarted;
  const bareMachine = machineBusyMs() - bareMachine0;
  const bareCpu = cpuMs(bare.pid) - bareCpu0;
  const rigdPid = servePid(dataDir);
  const rowsBefore = await settledCount(dataDir, db.url);
  const before = await metrics();
  // A fixed number of requests lasting about DURATION s, every one answered, so that the history
  // rows can be compared exactly with the 2xx answers (each "Ok" waits for its row's commit).
  const amount = Math.max(1000, Math.min(500_000, Math.round(warm.rps * DURATION)));
  const rigdCpu0 = cpuMs(rigdPid);
  const mainCpu0 = cpuMs(rigdPid, rigdPid);
  const threads0 = threadCpuMs(rigdPid);
  const machine0 = machineBusyMs();
  const pgCpu0 = db.serverPid ? treeCpuMs(db.serverPid()) : 0;
  const started = performance.now();
  const r = await loadRun(spec, rigdUrl, `n${amount}`);
  const wallMs = performance.now() - started;
  const machine = machineBusyMs() - machine0;
  const pgCpu = db.serverPid ? treeCpuMs(db.serverPid()) - pgCpu0 : 0;
  const rigdCpu = cpuMs(rigdPid) - rigdCpu0;
  const mainCpu = cpuMs(rigdPid, rigdPid) - mainCpu0;
  const rss = rssMiB(rigdPid);
  const threads = [...threadCpuMs(rigdPid)].map(([tid, th]) => ({ ...th, tid, ms: th.ms - (threads0.get(tid)?.ms ?? 0) })).filter((th) => th.ms > 0);
  const after = await metrics();
  const rows = (await countReports(dataDir, db.url)) - rowsBefore;
  const ratio = r.rps / b.rps;
  const p99Limit = 1.5 * b.p99 + 15;
  const checks: Check[] = [
    { figure: 'bare hapi PUT (own process)', value: `${Math.round(b.rps)} req/s, p50 ${b.p50} ms, p99 ${b.p99} ms, ${failures(b)} errors`, target: 'reference', ok: failures(b) === 0 },
    { figure: `rigd serve reports (${db.label})`, value: `${Math.round(r.rps)} req/s = ${ratio.toFixed(2)} x`, target: '>= 0.5 x', ok: ratio >= 0.5 },
    { figure: 'reports p50 / p99', value: `${r.p50} ms / ${r.p99} ms`, target: `p99 <= 1.5 x ${b.p99} + 15 = ${p99Limit.toFixed(1)} ms`, ok: r.p99 <= p99Limit },
    { figure: 'reports: errors; rows vs 2xx', value: `${failures(r)}; ${rows} rows, ${r.ok} 2xx`, target: '0; equal', ok: failures(r) === 0 && rows === r.ok },
  ];
  process.stdout.write(`\n${renderTable(checks)}\n`);
  const ms = (s: number) => Math.round(s * 1e4) / 10;
  const loop = delta(before, after, 'rigd_event_loop_delay_seconds');
  const commit = delta(before, after, 'rigd_db_commit_seconds');
  const size = delta(before, after, 'rigd_write_batch_size');
  process.stdout.write(
    `\nrigd's /metrics over the run (bucket upper bounds): event-loop delay p99 ${ms(loop.p99)} ms, max ${ms(loop.max)} ms; ${commit.count} commits, mean ${ms(commit.mean)} ms, p99 ${ms(commit.p99)} ms; batch mean ${Math.round(size.mean)} reports\n`,
  );
  const perRequest = (cpu: number, run: typeof r) => Math.round((cpu * 1000) / (run.ok + run.non2xx || 1));
  process.stdout.write(`CPU per request (user + system): rigd ${perRequest(rigdCpu, r)} µs, bare ${perRequest(bareCpu, b)} µs\n`);
  process.stdout.write(`rigd's main thread: ${perRequest(mainCpu, r)} µs per request, busy ${Math.round((100 * mainCpu) / wallMs)} % of the run; rigd's RSS ${rss.now} MiB at the end, peak ${rss.peak} MiB\n`);
  // Thread names say little on node 20 (most are "node"): the main thread, then the others by CPU.
  const others = threads.filter((th) => th.tid !== rigdPid).sort((a, b) => b.ms - a.ms);
  process.stdout.write(`rigd's threads, µs per request: main ${perRequest(mainCpu, r)}; the others ${others.slice(0, 6).map((th) => `${th.name} ${perRequest(th.ms, r)}`).join(', ')}\n`);
  // The machine's budget: every process of a run (server, client, PostgreSQL) shares its CPUs.
  const n = cpus().length;
  const budget = (run: typeof r, parts: [string, number][], busy: number, wall: number) =>
    `${parts.map(([name, ms]) => `${name} ${perRequest(ms, run)}`).join(' + ')}; the machine ${perRequest(busy, run)} (busy ${Math.round((100 * busy) / (wall * n))} % of ${n} CPUs)`;
  process.stdout.write(`the machine's CPU per request, µs, in the bare route's run: ${budget(b, [['server', bareCpu], ['client', b.clientCpuMs ?? 0]], bareMachine, bareWallMs)}\n`);
  const rigdParts: [string, number][] = [['rigd', rigdCpu], ['client', r.clientCpuMs ?? 0], ...(db.serverPid ? [['PostgreSQL', pgCpu] as [string, number]] : [])];
  process.stdout.write(`the machine's CPU per request, µs, in rigd's run:         ${budget(r, rigdParts, machine, wallMs)}\n`);
  process.stdout.write(`at 0.5 x the bare route (${Math.round(b.rps / 2)} req/s) ${n} CPUs allow at most ${Math.round((n * 1e6) / (b.rps / 2))} µs of the machine per request\n`);
  process.stdout.write(`load average: ${load0} at the start, ${loads()} at the end\n`);
  process.exitCode = checks.every((c) => c.ok) ? 0 : 1;
} finally {
  await stopBare();
  await stopRigd();
  await net.destroy();
  db.stop();
  if (process.env.BENCH_KEEP) process.stdout.write(`kept: ${work}\n`);
  else rmSync(work, { recursive: true, force: true });
}
