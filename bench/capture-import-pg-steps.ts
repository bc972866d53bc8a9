// Where the PostgreSQL import's time goes, process by process: the import alone (importCapture into
// the PostgreSQL store, the code `rigd serve` runs for a job, in this process) of the e2e bench's
// capture (bench/capture-import-data.ts) on a throwaway cluster with the server's default durability
// (bench/capture-import-pg.ts). Each run is timed from the call to the commit; CPU is read from /proc
// for the three processes the rows pass through: the capture child (reads and frames them), this
// process (decodes the frames, builds the COPY data; main thread and its helpers) and the store
// connection's server backend (parses and writes them). Runs alternate a fresh schema (tables new to
// the capture) and a repeat of the same capture (the earlier rows deleted first, as --force does).
// Run by hand: npm run bench:capture-import-pg-steps (builds first)
// Env: BENCH_MB (default 100), BENCH_RUNS (pairs, default 2).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { makeCapture, SCALE } from './capture-import-data.ts';
import { startCluster } from './capture-import-pg.ts';

// The built code (npm run build), as rigd serve runs it: the capture child is then dist/'s, not tsx's.
const dist = (module: string): Promise<unknown> => import(path.resolve(import.meta.dirname, '../dist', module));
const { PgCaptureStore } = (await dist('db/capture-store/postgres-writer.js')) as typeof import('../src/db/capture-store/postgres-writer.ts');
const { importCapture } = (await dist('ingest/import.js')) as typeof import('../src/ingest/import.ts');

const SIZE_MB = Number(process.env.BENCH_MB ?? 100);
const RUNS = Number(process.env.BENCH_RUNS ?? 2);
const TICK = 100; // USER_HZ

/** utime + stime of a process, seconds (0 once it is gone). */
function cpuS(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / TICK;
  } catch {
    return 0;
  }
}

async function backendPid(url: string, app: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const { rows } = await c.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [app]);
  await c.end();
  if (rows.length !== 1) throw new Error(`expected one backend of ${app}, found ${rows.length}`);
  return rows[0]!.pid;
}

const work = mkdtempSync(path.join(tmpdir(), 'rigd-bench-pg-steps-'));
const cluster = await startCluster();
try {
  const file = path.join(work, 'capture.sqlite');
  const bytes = await makeCapture(file, SIZE_MB * SCALE);
  console.log(`# import alone, PostgreSQL ${cluster.version}; capture ${(bytes / 1e6).toFixed(0)} MB; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log('run      rows     import_s  child_cpu_s  rigd_cpu_s  server_cpu_s  rows_per_s');
  for (let i = 0; i < RUNS * 2; i++) {
    const fresh = i % 2 === 0;
    const schema = `bench_${Math.floor(i / 2)}`;
    const store = await PgCaptureStore.open(cluster.url, schema);
    const server = await backendPid(cluster.url, 'rigd capture store');
    if (!fresh) await importCapture(file, 1, store, { timeoutMs: 600_000, maxBytes: 1e9 }); // the rows to replace
    let child = 0;
    let childCpu = 0;
    const sample = setInterval(() => {
      if (child) childCpu = Math.max(childCpu, cpuS(child));
    }, 20);
    const server0 = cpuS(server);
    const own0 = process.cpuUsage();
    const t0 = performance.now();
    const tables = await importCapture(file, 1, store, { timeoutMs: 600_000, maxBytes: 1e9, onChild: (pid) => (child = pid) });
    const s = (performance.now() - t0) / 1000;
    clearInterval(sample);
    const own = process.cpuUsage(own0);
    const serverCpu = cpuS(server) - server0;
    const rows = tables.reduce((n, t) => n + t.rows, 0);
    await store.close();
    console.log(
      `${fresh ? 'fresh ' : 'repeat'}  ${String(rows).padStart(7)}  ${s.toFixed(2).padStart(8)}  ${childCpu.toFixed(2).padStart(11)}  ${((own.user + own.system) / 1e6).toFixed(2).padStart(10)}  ${serverCpu.toFixed(2).padStart(12)}  ${Math.round(rows / s).toString().padStart(10)}`,
    );
  }
  console.log(`# load average at the end ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
} finally {
  cluster.stop();
  rmSync(work, { recursive: true, force: true });
}
