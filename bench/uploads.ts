// Uploads, as shipped: (1) GET /api/v1/rigs/upload with the embedded store (validation, storage stat,
// SigV4 presign, group-committed reservation) against a bare hapi route answering the same JSON
// shape in a process of its own (bench/serve/baseline-server.ts), same run, autocannon from a rig
// network namespace (10.144.188.2); (2) a 200 MB PUT with curl from the same namespace to a
// presigned URL of the embedded store, against curl writing the same file to a plain node:http sink
// that discards it (bench/serve/sink-server.ts, its own process), taking turns over several rounds;
// rigd serve's RSS (its /proc) before and at its peak over the PUTs.
// `bin/rigd serve` runs as its own process with the default config (request logging as shipped,
// into a file) and these keys set: server port (storage.public_url must name it), storage.public_url
// (the gateway's rig-side address), storage.max_upload_size (100 MiB by default; the PUT is larger),
// uploads.open_per_rig and uploads.bytes_per_rig_per_day (one address asks for every reservation:
// the per-rig bounds would stop the run, not measure it).
// Run by hand: npm run bench:uploads (builds dist/; needs root, iproute2, curl).
// Env: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 50), BENCH_PUT_MB (default 200),
// BENCH_PUT_ROUNDS (default 5), BENCH_KEEP=1.
import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import sqlite3 from 'sqlite3';
import { DB_FILE } from '../src/db/file.ts';
import { createHosts, type Hosts } from '../test/helpers/netns.ts';
import { freePort } from '../test/helpers/free-port.ts';
import { rssKb } from './proc.ts';
import { startBaseline } from './serve/baseline.ts';
import { servePid } from './serve/cpu.ts';
import { describeRun, loads } from './serve/describe.ts';
import { failures, getLoadRun } from './serve/load.ts';
import { startRigd } from './serve/rigd.ts';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const PUT_MB = Number(process.env.BENCH_PUT_MB ?? 200);
const PUT_ROUNDS = Number(process.env.BENCH_PUT_ROUNDS ?? 5);
const GW = '10.144.188.1';
const RIG_ADDR = '10.144.188.2';

/** curl in the namespace: PUT `file` to `url`; its status and seconds (curl's own time_total). */
async function curlPut(net: Hosts, url: string, file: string): Promise<{ seconds: number; status: string }> {
  const r = await net.exec('rigs', ['curl', '-sS', '-o', '/dev/null', '-w', '%{http_code} %{time_total}', '-X', 'PUT', '-T', file, url], { timeoutMs: 600_000 });
  const [status, seconds] = r.stdout.trim().split(' ');
  return { status: status ?? '', seconds: Number(seconds) };
}

/** A reservation asked for by curl in the namespace, as a rig asks: its presigned URL. */
async function reserve(net: Hosts, base: string, key: string, size: number): Promise<string> {
  const r = await net.exec('rigs', ['curl', '-sS', '-H', `host: ${GW}`, `${base}/api/v1/rigs/upload?key=${encodeURIComponent(key)}&size=${size}`]);
  const body = JSON.parse(r.stdout) as { url?: string };
  if (!body.url) throw new Error(`reservation: ${r.stdout}`);
  return body.url;
}

/** Reservations stored (read through a connection of the bench's own). */
function countUploads(dataDir: string): Promise<number> {
  const db = new sqlite3.Database(path.join(dataDir, DB_FILE), sqlite3.OPEN_READONLY);
  return new Promise((resolve, reject) => db.get('SELECT COUNT(*) AS n FROM uploads', (err, row: { n: number }) => (db.close(), err ? reject(err) : resolve(row.n))));
}

const work = mkdtempSync(path.join(tmpdir(), 'rigd-bench-uploads-'));
const dataDir = path.join(work, 'data');
mkdirSync(dataDir);
const net = await createHosts([{ name: 'rigs', addr: RIG_ADDR, gw: GW }]);
const stops: (() => Promise<unknown>)[] = [];
try {
  const port = await freePort();
  const rigd = await startRigd({
    dataDir,
    port,
    logFile: path.join(work, 'rigd.log'),
    env: {
      RIGD_STORAGE_PUBLIC_URL: `http://${GW}:${port}`,
      RIGD_STORAGE_MAX_UPLOAD_SIZE: String(1024 ** 3),
      RIGD_UPLOADS_OPEN_PER_RIG: '10000000',
      RIGD_UPLOADS_BYTES_PER_RIG_PER_DAY: String(2 ** 50),
    },
  });
  stops.push(() => rigd.stop());
  const pid = servePid(dataDir);
  const base = `http://${GW}:${port}`;
  process.stdout.write(describeRun(rigd));

  const bare = await startBaseline(GW);
  const spec = { net, from: 'rigs', host: GW, connections: CONNECTIONS };
  const issue = '/api/v1/rigs/upload?key=bench/k{n}.sqlite&size=1000';
  console.log(`upload URL issuance: ${CONNECTIONS} connections from ${RIG_ADDR} (network namespace), ${DURATION} s each, distinct keys`);
  await getLoadRun(spec, `http://${GW}:${bare.port}`, '/api/v1/rigs/upload?key=warm/k{n}.sqlite&size=1000', 2);
  const bareRun = await getLoadRun(spec, `http://${GW}:${bare.port}`, issue, DURATION);
  await bare.stop();
  await getLoadRun(spec, base, '/api/v1/rigs/upload?key=warm/k{n}.sqlite&size=1000', 2);
  const before = await countUploads(dataDir);
  const ours = await getLoadRun(spec, base, issue, DURATION);
  const rows = (await countUploads(dataDir)) - before;
  console.log(`  bare hapi (own process): ${bareRun.rps.toFixed(0)} req/s, p50 ${bareRun.p50} ms, p99 ${bareRun.p99} ms, errors ${failures(bareRun)}`);
  console.log(`  rigd's route (serve)   : ${ours.rps.toFixed(0)} req/s, p50 ${ours.p50} ms, p99 ${ours.p99} ms, non-2xx ${ours.non2xx}, errors ${ours.errors + ours.timeouts}`);
  console.log(`  ratio ${(ours.rps / bareRun.rps).toFixed(3)} (target >= 0.3); reservations stored ${rows} (>= 2xx ${ours.ok}: ${rows >= ours.ok})`);

  const file = path.join(work, 'big.bin');
  await pipeline(
    (async function* () {
      const chunk = Buffer.alloc(1024 * 1024);
      for (let i = 0; i < PUT_MB; i++) {
        chunk.fill(i & 0xff);
        yield chunk;
      }
    })(),
    createWriteStream(file),
  );
  const size = PUT_MB * 1024 * 1024;
  const sink = await startBaseline(GW, 'bench/serve/sink-server.ts');
  stops.push(() => sink.stop());
  const sinkUrl = `http://${GW}:${sink.port}/sink`;

  // One PUT at a time, taking turns: one warm-up each, then PUT_ROUNDS rounds. Figures are medians;
  // the ratio is of the medians.
  const sinkSeconds: number[] = [];
  const ourSeconds: number[] = [];
  await new Promise((r) => setTimeout(r, 500));
  const rssBefore = rssKb(pid);
  let peak = rssBefore;
  const sampler = setInterval(() => (peak = Math.max(peak, rssKb(pid))), 20);
  for (let round = 0; round <= PUT_ROUNDS; round++) {
    const plain = await curlPut(net, sinkUrl, file);
    const url = await reserve(net, base, `bench/big-${round}.bin`, size);
    const put = await curlPut(net, url, file);
    if (plain.status !== '200' || put.status !== '200') throw new Error(`PUT failed: sink ${plain.status}, rigd ${put.status}`);
    if (round === 0) continue;
    sinkSeconds.push(plain.seconds);
    ourSeconds.push(put.seconds);
  }
  clearInterval(sampler);
  const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
  const mbps = (s: number) => PUT_MB / s;
  const perRound = sinkSeconds.map((s, i) => (s / ourSeconds[i]!).toFixed(2)).join(' ');
  console.log(`PUT of ${PUT_MB} MB with curl from ${RIG_ADDR}, median of ${PUT_ROUNDS} rounds after a warm-up:`);
  console.log(`  node:http sink (own process): ${mbps(median(sinkSeconds)).toFixed(0)} MB/s (rounds: ${sinkSeconds.map((s) => mbps(s).toFixed(0)).join(' ')})`);
  console.log(`  rigd's embedded store      : ${mbps(median(ourSeconds)).toFixed(0)} MB/s (rounds: ${ourSeconds.map((s) => mbps(s).toFixed(0)).join(' ')}), hashed, written, fsynced and renamed`);
  console.log(`  ratio ${(median(sinkSeconds) / median(ourSeconds)).toFixed(3)} (target >= 0.5; per round ${perRound})`);
  console.log(`  RSS of rigd serve (pid ${pid}): ${(rssBefore / 1024).toFixed(0)} MB before the PUTs, peak ${(peak / 1024).toFixed(0)} MB, growth ${((peak - rssBefore) / 1024).toFixed(1)} MB`);
  console.log(`load average at the end: ${loads()}`);
  process.exitCode = failures(ours) === 0 && rows >= ours.ok ? 0 : 1;
} finally {
  for (const stop of stops.reverse()) await stop();
  await net.destroy();
  if (process.env.BENCH_KEEP) console.log(`kept: ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
