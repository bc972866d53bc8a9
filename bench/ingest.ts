// Capture ingestion throughput and latency, as shipped: `bin/rigd serve` (built dist/) as its own
// process with the default config (request logging as shipped, into a file) and these keys set:
// server port and storage.public_url (the gateway's rig-side address, 10.144.186.1: presigned URLs
// name it), storage.max_upload_size (100 MiB by default; the largest capture is 500 MB) and
// ingest.webhook_token (the webhook's bearer token; empty by default: no webhook).
//  1. For 50, 200 and 500 MB captures, put into the embedded store before each is measured:
//     end-to-end ingest rate (webhook from loopback, as MinIO on the gateway sends it -> the capture
//     ingested) as a ratio of curl downloading the same object from rigd's embedded store (presigned
//     GET) from a rig network namespace (10.144.186.2) in the same run, and the peak RSS growth of
//     the rigd serve process while it ingests (its /proc every 20 ms; the inspector's child process
//     is not counted: it has its own heap cap).
//  2. Webhook -> ingested latency of a 1 MB capture, N runs (p50, p95).
// "Ingested" is read from rigd's database through a read-only connection of the bench's own.
// Run by hand: npm run bench:ingest (builds dist/; needs root, iproute2, curl).
// Env: BENCH_SIZES (MB, default "50,200,500"), BENCH_RUNS (default 20), BENCH_KEEP=1.
import { createReadStream, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sqlite3 from 'sqlite3';
import { request } from 'undici';
import { loadConfig } from '../src/config/load.ts';
import { DB_FILE } from '../src/db/file.ts';
import { EmbeddedStorage } from '../src/storage/embedded.ts';
import { createHosts } from '../test/helpers/netns.ts';
import { freePort } from '../test/helpers/free-port.ts';
import { rssKb } from './proc.ts';
import { servePid } from './serve/cpu.ts';
import { describeRun, loads } from './serve/describe.ts';
import { startRigd } from './serve/rigd.ts';
import { makeCaptureFile as makeCapture } from './tail/seed.ts';

const SIZES = (process.env.BENCH_SIZES ?? '50,200,500').split(',').map(Number);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const MB = 1_000_000;
const TOKEN = 'bench-webhook-token-0123456789abcdef';
const GW = '10.144.186.1';

/** The job state of the capture stored under `key` (a read-only connection of the bench's own). */
function jobState(db: sqlite3.Database, key: string): Promise<{ state: string | null; last_error: string | null } | undefined> {
  return new Promise((resolve, reject) =>
    db.get('SELECT j.state AS state, j.last_error AS last_error FROM captures c LEFT JOIN jobs j ON j.id = c.job_id WHERE c.key = ?', [key], (err, row: { state: string | null; last_error: string | null } | undefined) =>
      err ? reject(err) : resolve(row),
    ),
  );
}

async function main(): Promise<void> {
  const work = mkdtempSync(path.join(tmpdir(), 'rigd-bench-ingest-'));
  const dataDir = path.join(work, 'data');
  mkdirSync(dataDir);
  const net = await createHosts([{ name: 'rigs', addr: '10.144.186.2', gw: GW }]);
  const port = await freePort();
  const publicUrl = `http://${GW}:${port}`;
  const local = `http://127.0.0.1:${port}`;
  const rigd = await startRigd({
    dataDir,
    port,
    logFile: path.join(work, 'rigd.log'),
    env: { RIGD_STORAGE_PUBLIC_URL: publicUrl, RIGD_STORAGE_MAX_UPLOAD_SIZE: String(600 * 1024 * 1024), RIGD_INGEST_WEBHOOK_TOKEN: TOKEN },
  }).catch(async (err: unknown) => {
    await net.destroy();
    throw err;
  });
  const pid = servePid(dataDir);
  process.stdout.write(describeRun(rigd));
  const config = loadConfig({ env: {}, overrides: { data_dir: dataDir, storage: { public_url: publicUrl } } }).config;
  const storage = new EmbeddedStorage(config);
  const db = new sqlite3.Database(path.join(dataDir, DB_FILE), sqlite3.OPEN_READONLY);
  db.configure('busyTimeout', 30_000);

  const put = async (key: string, file: string) => storage.putObject(key, createReadStream(file), { expectedSize: statSync(file).size });
  const webhook = async (key: string) => {
    const res = await request(`${local}/api/v1/webhooks/capture_uploaded`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: storage.objectUrl(key) }),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`webhook ${res.statusCode}: ${text}`);
  };
  const ingested = async (key: string, everyMs: number) => {
    for (;;) {
      const job = await jobState(db, key);
      if (job?.state === 'done') return;
      if (job?.state === 'failed') throw new Error(`${key} failed: ${job.last_error}`);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  };

  try {
    console.log(`# ingest throughput vs curl (rigd serve pid ${pid}; curl from 10.144.186.2)`);
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
        const r = await net.exec('rigs', ['curl', '-sS', '-o', '/dev/null', '-w', '%{http_code} %{size_download} %{time_total}', url], { timeoutMs: 600_000 });
        const [code, bytes, secs] = r.stdout.trim().split(' ');
        if (code !== '200' || Number(bytes) !== size) throw new Error(`curl: HTTP ${code}, ${bytes} bytes of ${size}: ${r.stderr}`);
        curlRuns.push(Number(secs));
      }
      const curlS = Math.min(...curlRuns);
      await new Promise((r) => setTimeout(r, 500));
      const baseline = rssKb(pid);
      let peak = baseline;
      const sampler = setInterval(() => (peak = Math.max(peak, rssKb(pid))), 20);
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
    console.log(`load average at the end: ${loads()}`);
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
    await rigd.stop();
    await net.destroy();
    if (process.env.BENCH_KEEP) console.log(`kept: ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}

await main();
