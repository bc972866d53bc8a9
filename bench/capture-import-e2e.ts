// Capture import end to end, as an operator runs it, against the sqlite3 CLI's own copy:
//  - rigd: `bin/rigd serve` runs as its own process with the default config (data_dir, port, log
//    level info and, with --engine postgres, database.url and cluster.single_node, as the embedded
//    store on PostgreSQL needs, from the environment); the capture is put
//    into its embedded store the way a PUT would; `bin/rigd ingest KEY --wait --json` (a fresh key)
//    and then `bin/rigd ingest KEY --wait --force --json` (the same capture imported again) are timed
//    from their start to their exit. rigd serve's RSS is sampled from /proc every 20 ms meanwhile.
//  - baseline: the sqlite3 CLI copying the same tables into a fresh file, same run:
//    `ATTACH 'capture' AS c; BEGIN; CREATE TABLE t AS SELECT * FROM c.t; ...; COMMIT`.
// Prints both times, the ratio (sqlite3 time / rigd time; target >= 0.5), rigd serve's RSS growth
// (target <= 64 MB on a 200 MB capture), the CPU of each process over the command (rigd serve, the capture
// child it forked and waited for, the rigd ingest command, PostgreSQL's server processes) and where rigd's time went: from the "capture imported" log
// line of the job (queued: job created to claimed; the ingester's steps; record: the handler's end
// to the commit of "done"; cli: the rest of the command's time: start-up, queueing, its polls, exit,
// split into start, before the job exists, and end, after the import was recorded).
// Run by hand: npm run build && npm run bench:capture-import-e2e [-- --engine postgres]
// Env: BENCH_SIZES (MB, default "100,200"); BENCH_RIGD, the bin/rigd to time (default this tree's:
// another build's, for runs alternating two builds). --engine postgres starts a throwaway cluster
// (bench/capture-import-pg.ts) with the server's default durability, and stops it at the end.
import { execFile, spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadConfig } from '../src/config/load.ts';
import { EmbeddedStorage } from '../src/storage/embedded.ts';
import { CAPTURE_TABLES, makeCapture, SCALE } from './capture-import-data.ts';
import { startCluster, type Cluster } from './capture-import-pg.ts';
import { freePort } from '../test/helpers/free-port.ts';
import { cpuParts, rssKb, treeCpuMs } from './proc.ts';
import { servePid } from './serve/cpu.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SIZES = (process.env.BENCH_SIZES ?? '100,200').split(',').map(Number);
const ENGINE = process.argv.includes('--engine') ? process.argv[process.argv.indexOf('--engine') + 1] : 'sqlite';
const MB = 1_000_000;
const RIGD = process.env.BENCH_RIGD ?? path.join(ROOT, 'bin', 'rigd');
const run = promisify(execFile);

interface Imported {
  capture_id: number;
  job_id: number;
  queued_ms: number;
  run_ms: number;
  steps_ms: Record<string, number>;
  /** SQLite store: when quick_check, the bounds scan (tables) and the copy ended, ms from the copy's start (they overlap). */
  overlapped_ms?: Record<string, number>;
  /** When rigd serve logged it (ISO): the import recorded, right before the line. */
  time: string;
}



const sec = (ms: number) => (ms / 1000).toFixed(2);

/** The sqlite3 CLI's copy of the capture's tables into a fresh file, one transaction; seconds. */
async function sqliteCopy(capture: string, work: string): Promise<number> {
  const target = path.join(work, `copy-${Date.now()}.sqlite`);
  const sql = [`ATTACH '${capture.replaceAll("'", "''")}' AS c;`, 'BEGIN;', ...CAPTURE_TABLES.map((t) => `CREATE TABLE ${t} AS SELECT * FROM c.${t};`), 'COMMIT;'].join('\n');
  const t0 = performance.now();
  await run('sqlite3', [target, sql]);
  const s = (performance.now() - t0) / 1000;
  rmSync(target, { force: true });
  return s;
}

/**
 * "queued 0.41  download 0.00  import 2.10  record 0.02  inspect 0.52 (header 0.01, ..., quick_check 0.40)
 * cli 0.30 (start 0.25, end 0.05)" (seconds). The command's own time split by the log line's time: start,
 * its start to the job's creation (start-up, queueing); end, the import recorded to its exit (the wait
 * for the end, the last read, the output, the exit).
 */
function breakdown(log: Imported, totalS: number, startedAt: number, endedAt: number): string {
  const s = (ms: number) => (ms / 1000).toFixed(2);
  const steps = Object.entries(log.steps_ms);
  const inspect = steps.filter(([k]) => k.startsWith('inspect')).reduce((n, [, v]) => n + v, 0);
  const rest = steps.filter(([k]) => !k.startsWith('inspect')).map(([k, v]) => `${k} ${s(v)}`);
  const cli = totalS * 1000 - log.queued_ms - log.run_ms;
  const end = endedAt - Date.parse(log.time);
  const start = Date.parse(log.time) - log.run_ms - log.queued_ms - startedAt;
  const parts = steps.filter(([k]) => k.startsWith('inspect:')).map(([k, v]) => `${k.slice('inspect:'.length)} ${s(v)}`);
  const overlap = log.overlapped_ms ? `  (within import, ended after: ${Object.entries(log.overlapped_ms).map(([k, v]) => `${k} ${s(v)}`).join(', ')})` : '';
  return `queued ${s(log.queued_ms)}  ${rest.join('  ')}  inspect ${s(inspect)} (${parts.join(', ')})  cli ${s(cli)} (start ${s(start)}, end ${s(end)})${overlap}`;
}

async function main(): Promise<void> {
  const cluster: Cluster | undefined = ENGINE === 'postgres' ? await startCluster() : undefined;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'rigd-bench-import-e2e-'));
  const work = mkdtempSync(path.join(tmpdir(), 'rigd-bench-import-files-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    RIGD_DATA_DIR: dataDir,
    RIGD_LOG_LEVEL: 'info',
    RIGD_STORAGE_PUBLIC_URL: base,
    RIGD_STORAGE_MAX_UPLOAD_SIZE: String(Math.max(...SIZES) * 2 * MB),
    ...(cluster ? { RIGD_DATABASE_URL: cluster.url, RIGD_CLUSTER_SINGLE_NODE: 'true' } : {}),
  };
  const serveArgs = ['--max-semi-space-size=32', RIGD, 'serve', '--port', String(port), '--host', '127.0.0.1'];
  const serve = spawn(process.execPath, serveArgs, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const imported = new Map<number, Imported>();
  const waiters = new Map<number, (l: Imported) => void>();
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: serve.stdout! }).on('line', (line) => {
      if (line.includes('rigd listening on')) resolve();
      if (!line.includes('"capture imported"')) return;
      const l = JSON.parse(line) as Imported;
      imported.set(l.job_id, l);
      waiters.get(l.job_id)?.(l);
    });
    serve.on('exit', (code) => reject(new Error(`rigd serve exited ${code}`)));
  });
  const logOf = (jobId: number) => imported.get(jobId) ?? new Promise<Imported>((resolve) => waiters.set(jobId, resolve));
  const config = loadConfig({ env: {}, overrides: { data_dir: dataDir, storage: { public_url: base } } }).config;
  const storage = new EmbeddedStorage(config);
  try {
    console.log(`# capture import end to end, ${cluster ? `PostgreSQL ${cluster.version}` : 'SQLite'} store; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    const keys = Object.entries(env).filter(([k]) => k.startsWith('RIGD_')).map(([k, v]) => `${k}=${v}`).join(' ');
    console.log(`# command: node ${[...process.execArgv, ...process.argv.slice(1)].map((a) => (a.startsWith('/') ? path.relative(process.cwd(), a) : a)).join(' ')}`);
    console.log(`# rigd serve: ${keys} node ${serveArgs.map((a) => path.relative(ROOT, a) || a).join(' ')} (pid ${serve.pid}; every other key at its default)`);
    console.log('# rigd: bin/rigd ingest KEY --wait --json (fresh key), then bin/rigd ingest KEY --wait --force --json; sqlite3: sqlite3 new.sqlite "ATTACH ... CREATE TABLE t AS SELECT * FROM c.t ..."');
    console.log('size_MB  rows       run     sqlite3_s  rigd_s  ratio  rigd_rss_base_MB  rigd_rss_growth_MB');
    for (const mb of SIZES) {
      const file = path.join(work, `cap-${mb}.sqlite`);
      const size = await makeCapture(file, mb * SCALE);
      const key = `bench/cap-${mb}-${Date.now()}.sqlite`;
      await storage.putObject(key, createReadStream(file), { expectedSize: size });
      const { stdout: count } = await run('sqlite3', [file, CAPTURE_TABLES.map((t) => `SELECT count(*) FROM ${t};`).join(' ')]);
      const rows = count.trim().split('\n').reduce((n, x) => n + Number(x), 0);
      for (const force of [false, true]) {
        const sqliteS = await sqliteCopy(file, work);
        await new Promise((r) => setTimeout(r, 500));
        const baseline = rssKb(serve.pid!);
        let peak = baseline;
        const sampler = setInterval(() => (peak = Math.max(peak, rssKb(serve.pid!))), 20);
        const servingPid = servePid(dataDir);
        const rigd0 = cpuParts(servingPid);
        const cli0 = cpuParts('self').reaped;
        const pg0 = cluster ? treeCpuMs(cluster.pid()) : 0;
        const startedAt = Date.now();
        const t0 = performance.now();
        const { stdout } = await run(process.execPath, [RIGD, 'ingest', key, '--wait', '--json', ...(force ? ['--force'] : [])], { env, maxBuffer: 16 * MB });
        const rigdS = (performance.now() - t0) / 1000;
        const endedAt = Date.now();
        clearInterval(sampler);
        const rigd1 = cpuParts(servingPid);
        const cpu = [
          `rigd serve ${sec(rigd1.self - rigd0.self)}`,
          `capture child ${sec(rigd1.reaped - rigd0.reaped)}`,
          `rigd ingest ${sec(cpuParts('self').reaped - cli0)}`,
          ...(cluster ? [`PostgreSQL ${sec(treeCpuMs(cluster.pid()) - pg0)}`] : []),
        ];
        const view = JSON.parse(stdout) as { state?: string; job_id?: number };
        if (view.state !== 'ingested' || typeof view.job_id !== 'number') throw new Error(`rigd ingest ended with ${stdout.slice(0, 300)}`);
        const log = await logOf(view.job_id);
        console.log(
          [
            (size / MB).toFixed(0).padStart(7),
            String(rows).padStart(9),
            (force ? '--force' : 'fresh').padEnd(7),
            sqliteS.toFixed(2).padStart(9),
            rigdS.toFixed(2).padStart(7),
            (sqliteS / rigdS).toFixed(2).padStart(6),
            (baseline / 1024).toFixed(0).padStart(16),
            ((peak - baseline) / 1024).toFixed(1).padStart(18),
          ].join('  '),
        );
        console.log(`         rigd's time (s): ${breakdown(log, rigdS, startedAt, endedAt)}`);
        console.log(`         CPU (s): ${cpu.join(', ')}`);
      }
      rmSync(file);
    }
  } finally {
    serve.kill('SIGTERM');
    await new Promise((r) => serve.on('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
    cluster?.stop();
  }
}

await main();
