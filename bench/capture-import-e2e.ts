// Capture import end to end, as an operator runs it, against the engine's own copy:
//  - rigd: `bin/rigd serve` runs as its own process (default config; data_dir, upload size and, for
//    PostgreSQL, database.url from the environment); the capture is put into its embedded store and
//    `bin/rigd ingest KEY --wait` is timed from its start to its exit (queue, pick-up, download,
//    inspection, quick_check, import, record). rigd serve's RSS is sampled every 20 ms meanwhile.
//  - baseline: the sqlite3 CLI copying the same tables into a fresh file, same run:
//    `ATTACH 'capture' AS c; BEGIN; CREATE TABLE t AS SELECT * FROM c.t; ...; COMMIT`.
// Prints both times and the ratio (sqlite3 time / rigd time; target >= 0.5), and rigd's RSS growth
// (target <= 64 MB on a 200 MB capture).
// Run by hand: npm run build && npm run bench:capture-import-e2e
// Env: BENCH_SIZES (MB, default "100,200"), RIGD_BENCH_DATABASE_URL=postgres://... (an empty database:
// rigd serve uses it, the store is its schema rigd_captures).
import { execFile, spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadConfig } from '../src/config/load.ts';
import { EmbeddedStorage } from '../src/storage/embedded.ts';
import { CAPTURE_TABLES, makeCapture, SCALE } from './capture-import-data.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SIZES = (process.env.BENCH_SIZES ?? '100,200').split(',').map(Number);
const MB = 1_000_000;
const run = promisify(execFile);

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

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

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'rigd-bench-import-e2e-'));
  const work = mkdtempSync(path.join(tmpdir(), 'rigd-bench-import-files-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const url = process.env.RIGD_BENCH_DATABASE_URL ?? '';
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    RIGD_DATA_DIR: dataDir,
    RIGD_LOG_LEVEL: 'warn',
    RIGD_STORAGE_PUBLIC_URL: base,
    RIGD_STORAGE_MAX_UPLOAD_SIZE: String(Math.max(...SIZES) * 2 * MB),
    ...(url ? { RIGD_DATABASE_URL: url } : {}),
  };
  const serve = spawn(process.execPath, ['--max-semi-space-size=32', path.join(ROOT, 'bin', 'rigd'), 'serve', '--port', String(port), '--host', '127.0.0.1'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    serve.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('rigd listening on')) resolve();
    });
    serve.on('exit', (code) => reject(new Error(`rigd serve exited ${code}`)));
  });
  const config = loadConfig({ env: {}, overrides: { data_dir: dataDir, storage: { public_url: base } } }).config;
  const storage = new EmbeddedStorage(config);
  try {
    console.log(`# capture import end to end: rigd ingest KEY --wait with rigd serve (pid ${serve.pid}, store ${url ? 'PostgreSQL' : 'SQLite'}) vs the sqlite3 CLI's copy`);
    console.log('size_MB  rows       sqlite3_s  rigd_s  ratio  rigd_rss_base_MB  rigd_rss_growth_MB');
    for (const mb of SIZES) {
      const file = path.join(work, `cap-${mb}.sqlite`);
      const size = await makeCapture(file, mb * SCALE);
      const key = `bench/cap-${mb}-${Date.now()}.sqlite`;
      await storage.putObject(key, createReadStream(file), { expectedSize: size });
      const { stdout: count } = await run('sqlite3', [file, CAPTURE_TABLES.map((t) => `SELECT count(*) FROM ${t};`).join(' ')]);
      const rows = count.trim().split('\n').reduce((n, x) => n + Number(x), 0);
      const sqliteS = await sqliteCopy(file, work);
      await new Promise((r) => setTimeout(r, 500));
      const baseline = rssKb(serve.pid!);
      let peak = baseline;
      const sampler = setInterval(() => (peak = Math.max(peak, rssKb(serve.pid!))), 20);
      const t0 = performance.now();
      const { stdout } = await run(process.execPath, [path.join(ROOT, 'bin', 'rigd'), 'ingest', key, '--wait', '--json'], { env, maxBuffer: 16 * MB });
      const rigdS = (performance.now() - t0) / 1000;
      clearInterval(sampler);
      const state = (JSON.parse(stdout) as { state?: string }).state;
      if (state !== 'ingested') throw new Error(`rigd ingest ended with ${stdout.slice(0, 300)}`);
      rmSync(file);
      console.log(
        [
          (size / MB).toFixed(0).padStart(7),
          String(rows).padStart(9),
          sqliteS.toFixed(2).padStart(10),
          rigdS.toFixed(2).padStart(7),
          (sqliteS / rigdS).toFixed(2).padStart(6),
          (baseline / 1024).toFixed(0).padStart(16),
          ((peak - baseline) / 1024).toFixed(1).padStart(18),
        ].join('  '),
      );
    }
  } finally {
    serve.kill('SIGTERM');
    await new Promise((r) => serve.on('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
