// Rig report latency, its tail, and what else the gateway may be doing meanwhile. One command, one
// table: npm run bench:report-tail (builds dist/ first: the `rigd rigs` children run it; a libuv pool
// of 16 threads, as bin/rigd gives `rigd serve`).
//  1. A bare hapi PUT route and rigd's PUT /api/v1/rigs/:id, 100 connections from a rig network
//     namespace (autocannon in its own process there), same run: req/s, p99, errors, rows == 2xx.
//  2. The same load while (a) a 100 MB capture is uploaded to the embedded store and ingested,
//     (b) five `rigd rigs --watch` running on terminals and /rigs fetched every second, (c) the
//     retention sweep deletes 1 M history rows. Each load runs from 1 s before the activity to its end.
//  3. With 10,000 rigs and a week of history: GET /rigs, GET /api/v1/rigs and `rigd rigs --json`, p50.
// Beside each run: rigd's own histograms (event-loop delay, COMMIT time, batch size and time), GC
// pauses and a threadpool probe (bench/tail/probes.ts). Needs root and iproute2 (network namespaces).
// Env: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 100), BENCH_OLD_ROWS (default 1e6),
// BENCH_HISTORY_DAYS (the 10,000 rigs' history, default 7).
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load.ts';
import { silentLogger } from '../src/log.ts';
import { createServer } from '../src/server/server.ts';
import { openApp } from '../src/services/app.ts';
import { createHosts } from '../test/helpers/netns.ts';
import { closedPort } from '../test/helpers/storage.ts';
import { delta, ProcessProbe } from './tail/probes.ts';
import { makeCaptureFile, seedFleet, seedOldReports } from './tail/seed.ts';
import { bareServer } from './tail/bare.ts';
import { renderTable, type Check } from './tail/table.ts';
import type { LoadRun } from './tail/run.ts';

// `rigd serve` runs the built JavaScript without source maps (bin/rigd); tsx turns them on, and then
// every Error's stack is mapped when read (Sequelize reads one per query). Measure as rigd runs.
process.setSourceMapsEnabled(false);

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const OLD_ROWS = Number(process.env.BENCH_OLD_ROWS ?? 1_000_000);
const HISTORY_DAYS = Number(process.env.BENCH_HISTORY_DAYS ?? 7);
const RIGS = 1000;
const FLEET = 10_000;
const GW = '10.144.130.1';
const RIG_ADDR = '10.144.130.2';

type Run = LoadRun;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const failures = (r: Run) => r.errors + r.timeouts + r.non2xx;

const net = await createHosts([{ name: 'rigs', addr: RIG_ADDR, gw: GW }]);
const dataDir = mkdtempSync(path.join(tmpdir(), 'rigd-bench-tail-'));
const work = mkdtempSync(path.join(tmpdir(), 'rigd-bench-tail-files-'));
const port = await closedPort();
const base = `http://${GW}:${port}`;
const { config } = loadConfig({
  env: {},
  overrides: { data_dir: dataDir, vpn: { cidr: '10.144.130.0/24' }, log: { level: 'silent' }, rigs: { new_ids_per_address_per_hour: 10_000_000 }, storage: { public_url: base, max_upload_size: 300 * 1024 * 1024 } },
});
const app = await openApp(config);
const rigd = await createServer(app, { host: GW, port, log: silentLogger });
await app.start();
await rigd.start();
const bare = await bareServer(GW);
const bareUrl = `http://${GW}:${bare.info.port}`;
const probe = new ProcessProbe(path.join(dataDir, 'rigd.sqlite'));

/** Rig reports from the namespace until `length` ("n<amount>" or seconds) or stop() is called. */
function startLoad(url: string, length: string): { result: Promise<Run>; stop: () => void } {
  const child = spawn('ip', ['netns', 'exec', net.host('rigs').ns, process.execPath, '--import', 'tsx', path.join(ROOT, 'bench/tail/load.ts'), url, GW, String(CONNECTIONS), length, String(RIGS)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const result = new Promise<Run>((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as Run) : reject(new Error(`load exited ${code}: ${out}`)))),
  );
  return { result, stop: () => child.kill('SIGTERM') };
}

interface Diagnosis {
  label: string;
  run: Run;
  note: string;
  [k: string]: unknown;
}
const diagnoses: Diagnosis[] = [];

/**
 * One measured load run: `length` alone, or with `activity` started 1 s in, the load stopping when
 * the activity ends.
 */
async function measured(label: string, length: string, activity?: () => Promise<string>): Promise<Run> {
  const before = await app.metrics.render();
  probe.start();
  const load = startLoad(base, activity ? '600' : length);
  let note = length;
  if (activity) {
    await sleep(1000);
    note = await activity();
    load.stop();
  }
  const run = await load.result;
  const proc = probe.stop();
  const after = await app.metrics.render();
  const ms = (s: number) => Math.round(s * 1e4) / 10;
  const loop = delta(before, after, 'rigd_event_loop_delay_seconds');
  const commit = delta(before, after, 'rigd_db_commit_seconds');
  const size = delta(before, after, 'rigd_write_batch_size');
  const batch = delta(before, after, 'rigd_write_batch_commit_duration_seconds');
  diagnoses.push({
    label,
    run,
    note,
    loop_p99_ms: ms(loop.p99),
    loop_max_ms: ms(loop.max),
    commits: commit.count,
    commit_mean_ms: ms(commit.mean),
    commit_p99_ms: ms(commit.p99),
    batch_mean_items: Math.round(size.mean),
    batch_p99_items: size.p99,
    batch_mean_ms: ms(batch.mean),
    batch_p99_ms: ms(batch.p99),
    gc_max_ms: Math.round(proc.gcMaxMs * 10) / 10,
    gc_total_ms: Math.round(proc.gcTotalMs),
    pool_p99_ms: Math.round(proc.poolP99Ms * 10) / 10,
    pool_max_ms: Math.round(proc.poolMaxMs * 10) / 10,
  });
  return run;
}

const rigdRun = (args: string[]) =>
  new Promise<number>((resolve, reject) => {
    const t0 = performance.now();
    execFile(path.join(ROOT, 'bin/rigd'), args, { env: { ...process.env, RIGD_DATA_DIR: dataDir }, maxBuffer: 256 * 1024 * 1024 }, (err, stdout) => {
      if (err) return reject(err);
      JSON.parse(stdout);
      resolve(performance.now() - t0);
    });
  });

async function fetchTime(url: string, headers: Record<string, string>, expect: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, { headers });
  const text = await res.text();
  if (res.status !== 200 || !text.includes(expect)) throw new Error(`GET ${url}: ${res.status}`);
  return performance.now() - t0;
}

const checks: Check[] = [];
try {
  const load0 = loadavg();
  process.stdout.write(`report tail: ${CONNECTIONS} connections from ${RIG_ADDR} (network namespace), ${RIGS} rigs, ${DURATION} s runs, ${cpus().length} CPUs, node ${process.version}, load average ${load0.map((l) => l.toFixed(2)).join(' ')}\n`);
  // Warm-up: JIT, connections, the 1,000 rigs registered (their first insert is not the steady state).
  await startLoad(bareUrl, '2').result;
  const warm = await startLoad(base, '3').result;
  await sleep(500);
  await app.db.writes.drain();

  const b = await startLoad(bareUrl, String(DURATION)).result;
  const rowsBefore = await app.db.models.RigReport.count();
  // A fixed number of requests lasting about DURATION s, every one answered, so that the history
  // rows can be compared exactly with the 2xx answers.
  const amount = Math.min(500_000, Math.round(warm.rps * DURATION));
  const alone = await measured('alone', `n${amount}`);
  await app.db.writes.drain();
  const rows = (await app.db.models.RigReport.count()) - rowsBefore;
  const p99Limit = 1.5 * b.p99 + 15;
  checks.push({ figure: 'bare hapi PUT req/s, p99', value: `${Math.round(b.rps)} req/s, p99 ${b.p99} ms`, target: 'reference', ok: failures(b) === 0 });
  checks.push({ figure: 'reports alone: req/s vs bare', value: `${Math.round(alone.rps)} req/s = ${(alone.rps / b.rps).toFixed(2)} x`, target: '>= 0.5 x', ok: alone.rps / b.rps >= 0.5 });
  checks.push({ figure: 'reports alone: p99', value: `${alone.p99} ms`, target: `<= 1.5 x ${b.p99} + 15 = ${p99Limit.toFixed(1)} ms`, ok: alone.p99 <= p99Limit });
  checks.push({ figure: 'reports alone: errors; rows vs 2xx', value: `${failures(alone)}; ${rows} rows, ${alone.ok} 2xx`, target: '0; equal', ok: failures(alone) === 0 && rows === alone.ok });
  const busyLimit = 3 * alone.p99;
  const busy = (figure: string, r: Run) =>
    checks.push({ figure, value: `p99 ${r.p99} ms, ${failures(r)} errors (${Math.round(r.rps)} req/s)`, target: `<= 3 x ${alone.p99} = ${busyLimit} ms, 0`, ok: r.p99 <= busyLimit && failures(r) === 0 });

  // (a) A 100 MB capture: reserved and PUT with curl from the rig namespace, then ingested.
  const capture = path.join(work, 'capture.sqlite');
  const size = await makeCaptureFile(capture, 100);
  const key = 'rig1/bench-100mb.sqlite';
  busy(
    '(a) during a 100 MB upload + ingest',
    await measured('(a) upload+ingest', '', async () => {
      const t0 = performance.now();
      const reserve = await net.curl('rigs', ['-H', `host: ${GW}:${port}`, `${base}/api/v1/rigs/upload?key=${key}&size=${size}`]);
      if (reserve.status !== 200) throw new Error(`reserve: ${reserve.status} ${reserve.body}`);
      const put = await net.curl('rigs', ['-X', 'PUT', '-T', capture, JSON.parse(reserve.body).url], { timeoutMs: 300_000 });
      if (put.status !== 200) throw new Error(`PUT: ${put.status} ${put.body}`);
      const uploaded = performance.now();
      for (;;) {
        const c = await app.db.models.Capture.findOne({ where: { key }, raw: true });
        // A capture's run state is its job's.
        const job = c?.job_id ? await app.db.models.Job.findByPk(c.job_id, { raw: true }) : null;
        if (job?.state === 'failed') throw new Error(`ingest failed: ${job.last_error}`);
        if (job?.state === 'done') break;
        await sleep(100);
      }
      return `${(size / 1e6).toFixed(0)} MB: upload ${Math.round(uploaded - t0)} ms, ingest ${Math.round(performance.now() - uploaded)} ms`;
    }),
  );

  // (b) Five `rigd rigs --watch` on 160 x 50 terminals (script(1) gives each a pty), started and
  // drawing before the load begins (the scenario is five watchers running, not five starting), and
  // /rigs every second.
  const watchers = Array.from({ length: 5 }, () =>
    spawn('script', ['-qfec', `stty rows 50 cols 160; exec ${path.join(ROOT, 'bin/rigd')} rigs --watch --interval 1`, '/dev/null'], {
      env: { ...process.env, RIGD_DATA_DIR: dataDir, TERM: 'xterm-256color' },
      stdio: ['pipe', 'pipe', 'ignore'],
      detached: true,
    }),
  );
  let watched = 0;
  for (const w of watchers) w.stdout.on('data', (d: Buffer) => (watched += d.length));
  await sleep(3000);
  busy(
    '(b) during 5 rigs --watch + /rigs each s',
    await measured('(b) watch+/rigs', '', async () => {
      const before = watched;
      const pages: number[] = [];
      for (let i = 0; i < DURATION; i++) {
        pages.push(await fetchTime(`${base}/rigs`, { host: GW }, 'rig999'));
        await sleep(Math.max(0, 1000 - pages[pages.length - 1]));
      }
      if (watched === before) throw new Error('the watchers drew nothing during the run');
      return `${pages.length} pages, p50 ${median(pages).toFixed(0)} ms; watchers drew ${((watched - before) / 1e3).toFixed(0)} KB meanwhile`;
    }),
  );
  for (const w of watchers) process.kill(-w.pid!, 'SIGTERM');

  // (c) The retention sweep over OLD_ROWS rows older than the retention window.
  await seedOldReports(dataDir, OLD_ROWS, RIGS, config.rigs.history_retention_days + 1);
  busy(
    '(c) during the sweep of 1 M old rows',
    await measured('(c) retention sweep', '', async () => {
      const t0 = performance.now();
      const deleted = await app.rigs.retention.prune();
      return `${deleted} rows deleted in ${((performance.now() - t0) / 1000).toFixed(1)} s`;
    }),
  );

  // Listings with 10,000 rigs (the 1,000 above and 9,000 more with a week of history).
  await seedFleet(dataDir, RIGS, FLEET, HISTORY_DAYS);
  const user = await app.users.create({ username: 'bench', email: 'bench@example.com', password: 'bench-password-1' });
  const { token } = await app.sessions.login(user.username, 'bench-password-1', '127.0.0.1');
  const times = async (n: number, fn: () => Promise<number>) => {
    const xs: number[] = [];
    for (let i = 0; i < n; i++) xs.push(await fn());
    return median(xs.slice(Math.min(2, n - 1)));
  };
  const page = await times(22, () => fetchTime(`${base}/rigs`, { host: GW }, `rig${FLEET - 1}`));
  const api = await times(22, () => fetchTime(`${base}/api/v1/rigs`, { host: GW, authorization: `Bearer ${token}` }, `rig${FLEET - 1}`));
  const cli = await times(7, () => rigdRun(['rigs', '--json']));
  checks.push({ figure: `GET /rigs, ${FLEET} rigs, p50`, value: `${page.toFixed(0)} ms`, target: '< 100 ms', ok: page < 100 });
  checks.push({ figure: `GET /api/v1/rigs, ${FLEET} rigs, p50`, value: `${api.toFixed(0)} ms`, target: '< 100 ms', ok: api < 100 });
  checks.push({ figure: `rigd rigs --json, ${FLEET} rigs, p50`, value: `${cli.toFixed(0)} ms`, target: '< 1000 ms', ok: cli < 1000 });

  process.stdout.write(`\n${renderTable(checks)}\n`);
  process.stdout.write(`\nwhere the time went (rigd's histograms: bucket upper bounds; GC and threadpool probe of this process):\n`);
  for (const d of diagnoses) {
    const { label, run, note, ...rest } = d;
    process.stdout.write(`${label}: p50 ${run.p50} ms p99 ${run.p99} ms max ${run.max} ms; ${note}\n  ${Object.entries(rest).map(([k, v]) => `${k} ${v}`).join(', ')}\n`);
  }
  process.stdout.write(`load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
  process.exitCode = checks.every((c) => c.ok) ? 0 : 1;
} finally {
  await bare.stop();
  await rigd.stop({ timeout: 2000 });
  await app.close();
  await net.destroy();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
}
