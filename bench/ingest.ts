// Capture ingestion throughput and latency, against a real `rigd serve` child (built dist/):
//  1. For 50, 200 and 500 MB captures: end-to-end ingest rate (webhook -> ingested) as a ratio of
//     `curl` downloading the same object from the embedded store (presigned GET) in the same run,
//     and the peak RSS growth of the rigd process while it ingests (sampled from /proc every 20 ms;
//     the inspector's child process is not counted: it has its own heap cap).
//  2. Webhook -> ingested latency of a 1 MB capture, N runs (p50, p95).
// Run by hand: npm run build && node --import tsx bench/ingest.ts
// Env: BENCH_SIZES (MB, default "50,200,500"), BENCH_RUNS (default 20).
import { execFile, spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import sqlite3 from 'sqlite3';
import { request } from 'undici';
import { loadConfig } from '../src/config/load.ts';
import { openDatabase } from '../src/db/index.ts';
import { EmbeddedStorage } from '../src/storage/embedded.ts';
import { freePort } from '../test/helpers/free-port.ts';
import { rssKb } from './proc.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SIZES = (process.env.BENCH_SIZES ?? '50,200,500').split(',').map(Number);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const MB = 1_000_000;
const TOKEN = 'bench-webhook-token-0123456789abcdef';
const run = promisify(execFile);

function exec(db: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
}

/** A capture of about `mb` MB: a readings table plus a table of 4 KB random blobs. */
async function makeCapture(file: string, mb: number): Promise<number> {
  const db: sqlite3.Database = await new Promise((resolve, reject) => {
    const d: sqlite3.Database = new sqlite3.Database(file, (err) => (err ? reject(err) : resolve(d)));
  });
  const blobs = Math.max(1, Math.round((mb * MB) / 4150));
  await exec(db, 'PRAGMA page_size = 4096; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN');
  await exec(db, 'CREATE TABLE readings (id INTEGER PRIMARY KEY, sensor TEXT, value REAL, taken_at INTEGER)');
  await exec(db, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) INSERT INTO readings SELECT i, 's' || (i % 8), i * 0.5, 1700000000 + i FROM n");
  await exec(db, 'CREATE TABLE frames (id INTEGER PRIMARY KEY, data BLOB)');
  await exec(db, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${blobs}) INSERT INTO frames SELECT i, randomblob(4000) FROM n`);
  await exec(db, 'COMMIT');
  await new Promise<void>((resolve) => db.close(() => resolve()));
  return statSync(file).size;
}



async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'rigd-bench-ingest-'));
  const work = mkdtempSync(path.join(tmpdir(), 'rigd-bench-files-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    RIGD_DATA_DIR: dataDir,
    RIGD_LOG_LEVEL: 'warn',
    RIGD_STORAGE_PUBLIC_URL: base,
    RIGD_STORAGE_MAX_UPLOAD_SIZE: String(600 * 1024 * 1024),
    RIGD_INGEST_WEBHOOK_TOKEN: TOKEN,
    // The object routes follow the VPN rule: loopback is "the VPN" for this bench (as in bench/rig-reports.ts).
    RIGD_VPN_CIDR: '127.0.0.0/8',
  };
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'rigd'), 'serve', '--port', String(port), '--host', '127.0.0.1'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('rigd listening on')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`rigd serve exited ${code}`)));
  });
  const config = loadConfig({ env: {}, overrides: { data_dir: dataDir, storage: { public_url: base } } }).config;
  const storage = new EmbeddedStorage(config);
  const db = await openDatabase(dataDir);

  const put = async (key: string, file: string) => storage.putObject(key, createReadStream(file), { expectedSize: statSync(file).size });
  const webhook = async (key: string) => {
    const res = await request(`${base}/api/v1/webhooks/capture_uploaded`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: storage.objectUrl(key) }),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`webhook ${res.statusCode}: ${text}`);
  };
  const ingested = async (key: string, everyMs: number) => {
    for (;;) {
      const c = await db.models.Capture.findOne({ where: { key }, include: [{ association: 'job', required: false }] });
      if (c?.job?.state === 'done') return c;
      if (c?.job?.state === 'failed') throw new Error(`${key} failed: ${c.job.last_error}`);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  };

  try {
    console.log(`# ingest throughput vs curl (rigd pid ${child.pid})`);
    console.log('size_MB  curl_MB/s  ingest_MB/s  ratio  rss_base_MB  rss_peak_growth_MB');
    for (const mb of SIZES) {
      const file = path.join(work, `cap-${mb}.sqlite`);
      const size = await makeCapture(file, mb);
      const key = `bench/cap-${mb}.sqlite`;
      await put(key, file);
      rmSync(file);
      // curl: the same object over HTTP from the same rigd process (presigned GET), to /dev/null.
      const url = await storage.presignGet(key, 900);
      const curlRuns: number[] = [];
      for (let i = 0; i < 2; i++) {
        const { stdout } = await run('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code} %{size_download} %{time_total}', url]);
        const [code, bytes, secs] = stdout.trim().split(' ');
        if (code !== '200' || Number(bytes) !== size) throw new Error(`curl: HTTP ${code}, ${bytes} bytes of ${size}`);
        curlRuns.push(Number(secs));
      }
      const curlS = Math.min(...curlRuns);
      global.gc?.();
      await new Promise((r) => setTimeout(r, 500));
      const baseline = rssKb(child.pid!);
      let peak = baseline;
      const sampler = setInterval(() => (peak = Math.max(peak, rssKb(child.pid!))), 20);
      const t0 = performance.now();
      await webhook(key);
      await ingested(key, 20);
      const s = (performance.now() - t0) / 1000;
      clearInterval(sampler);
      const curlRate = size / MB / curlS;
      const rate = size / MB / s;
      console.log(
        [(size / MB).toFixed(0).padStart(7), curlRate.toFixed(0).padStart(9), rate.toFixed(0).padStart(11), (rate / curlRate).toFixed(2).padStart(6), (baseline / 1024).toFixed(0).padStart(11), ((peak - baseline) / 1024).toFixed(1).padStart(18)].join('  '),
      );
    }

    console.log(`\n# webhook -> ingested, 1 MB capture, ${RUNS} runs`);
    const small = path.join(work, 'small.sqlite');
    const smallSize = await makeCapture(small, 1);
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const key = `bench/small-${i}.sqlite`;
      await put(key, small);
      const t0 = performance.now();
      await webhook(key);
      await ingested(key, 5);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!;
    console.log(`size ${(smallSize / MB).toFixed(2)} MB: p50 ${q(0.5).toFixed(0)} ms, p95 ${q(0.95).toFixed(0)} ms, min ${times[0]!.toFixed(0)} ms, max ${times[times.length - 1]!.toFixed(0)} ms`);
  } finally {
    await db.close();
    child.kill('SIGTERM');
    await new Promise((r) => child.on('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
