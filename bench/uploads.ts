// Uploads: (1) GET /api/v1/rigs/upload with the embedded store (validation, storage stat, SigV4
// presign, group-committed reservation) against a bare hapi route answering the same JSON shape,
// same machine, same run; (2) a 200 MB PUT to the embedded store with curl, against curl writing
// the same file to a plain node:http sink that discards it, taking turns over several rounds; peak
// RSS of this process (the server).
// Run by hand: npm run bench:uploads
//
// The VPN rule still runs: vpn.cidr is 127.0.0.0/8 and the Host 127.0.0.1, so loopback passes.
// Env: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 50), BENCH_PUT_MB (default 200),
// BENCH_PUT_ROUNDS (default 5).
import Hapi from '@hapi/hapi';
import autocannon from 'autocannon';
import { execFile } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { loadConfig } from '../src/config/load.ts';
import { silentLogger } from '../src/log.ts';
import { createServer } from '../src/server/server.ts';
import { openApp } from '../src/services/app.ts';
import { freePort } from '../test/helpers/free-port.ts';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const PUT_MB = Number(process.env.BENCH_PUT_MB ?? 200);
const PUT_ROUNDS = Number(process.env.BENCH_PUT_ROUNDS ?? 5);
const run = promisify(execFile);

async function issue(url: string, pathFor: (n: number) => string) {
  let n = 0;
  const r = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION,
    headers: { host: '127.0.0.1' },
    requests: [{ setupRequest: (req) => ({ ...req, path: pathFor(n++) }) }],
  });
  return { rps: (r['2xx'] + r.non2xx) / r.duration, p50: r.latency.p50, p99: r.latency.p99, ok: r['2xx'], non2xx: r.non2xx, errors: r.errors };
}


async function curlPut(url: string, file: string): Promise<{ seconds: number; status: string }> {
  const { stdout } = await run('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code} %{time_total}', '-X', 'PUT', '-T', file, url], {
    maxBuffer: 1 << 20,
  });
  const [status, seconds] = stdout.trim().split(' ');
  return { status, seconds: Number(seconds) };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'rigd-bench-uploads-'));
  const port = await freePort();
  const { config } = loadConfig({
    env: {},
    overrides: {
      data_dir: path.join(dir, 'data'),
      vpn: { cidr: '127.0.0.0/8' },
      server: { port },
      storage: { max_upload_size: 1024 * 1024 * 1024, public_url: `http://127.0.0.1:${port}` },
      log: { level: 'silent' },
      // One address asks for every reservation: the per-rig bounds would stop the run, not measure it.
      uploads: { open_per_rig: 10_000_000, bytes_per_rig_per_day: 2 ** 50 },
    },
  });
  const app = await openApp(config);
  const server = await createServer(app, { host: '127.0.0.1', port, log: silentLogger });
  await app.start();
  await server.start();
  const base = `http://127.0.0.1:${server.info.port}`;

  const bare = Hapi.server({ host: '127.0.0.1', port: 0 });
  bare.route({
    method: 'GET',
    path: '/api/v1/rigs/upload',
    handler: () => ({ success: true, url: 'http://127.0.0.1/captures/bench/k.sqlite?X-Amz-Signature=0', exists: false, size: null, id: 1 }),
  });
  await bare.start();

  console.log(`upload URL issuance: ${CONNECTIONS} connections, ${DURATION} s each, distinct keys`);
  const bareRun = await issue(`http://127.0.0.1:${bare.info.port}`, (n) => `/api/v1/rigs/upload?key=bench/k${n}.sqlite&size=1000`);
  const ours = await issue(base, (n) => `/api/v1/rigs/upload?key=bench/k${n}.sqlite&size=1000`);
  const rows = await app.db.models.Upload.count();
  console.log(`  bare hapi: ${bareRun.rps.toFixed(0)} req/s, p50 ${bareRun.p50} ms, p99 ${bareRun.p99} ms`);
  console.log(`  rigd     : ${ours.rps.toFixed(0)} req/s, p50 ${ours.p50} ms, p99 ${ours.p99} ms, non-2xx ${ours.non2xx}, errors ${ours.errors}`);
  console.log(`  ratio ${(ours.rps / bareRun.rps).toFixed(3)} (target >= 0.3); reservations stored ${rows} (>= 2xx ${ours.ok}: ${rows >= ours.ok})`);
  await bare.stop();

  const file = path.join(dir, 'big.bin');
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

  const sink = http.createServer((req, res) => {
    req.on('data', () => undefined);
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const sinkUrl = `http://127.0.0.1:${(sink.address() as { port: number }).port}/sink`;

  // Both targets live in this process (same heap, same event loop), one PUT at a time, taking turns:
  // one warm-up each, then PUT_ROUNDS rounds. Figures are medians; the ratio is of the medians.
  const sinkSeconds: number[] = [];
  const ourSeconds: number[] = [];
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let peak = rssBefore;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  for (let round = 0; round <= PUT_ROUNDS; round++) {
    const plain = await curlPut(sinkUrl, file);
    const { url } = await app.uploads.reserve({ key: `bench/big-${round}.bin`, size: String(size) }, '127.0.0.1');
    const put = await curlPut(url, file);
    if (plain.status !== '200' || put.status !== '200') throw new Error(`PUT failed: sink ${plain.status}, rigd ${put.status}`);
    if (round === 0) continue;
    sinkSeconds.push(plain.seconds);
    ourSeconds.push(put.seconds);
  }
  clearInterval(sampler);
  sink.close();
  const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
  const mbps = (s: number) => PUT_MB / s;
  const perRound = sinkSeconds.map((s, i) => (s / ourSeconds[i]!).toFixed(2)).join(' ');
  console.log(`embedded PUT of ${PUT_MB} MB with curl, median of ${PUT_ROUNDS} rounds after a warm-up:`);
  console.log(`  node:http sink: ${mbps(median(sinkSeconds)).toFixed(0)} MB/s (rounds: ${sinkSeconds.map((s) => mbps(s).toFixed(0)).join(' ')})`);
  console.log(`  rigd embedded : ${mbps(median(ourSeconds)).toFixed(0)} MB/s (rounds: ${ourSeconds.map((s) => mbps(s).toFixed(0)).join(' ')}), hashed, written, fsynced and renamed`);
  console.log(`  ratio ${(median(sinkSeconds) / median(ourSeconds)).toFixed(3)} (target >= 0.5; per round ${perRound}); peak RSS ${(peak / 1048576).toFixed(0)} MB, growth ${((peak - rssBefore) / 1048576).toFixed(1)} MB`);

  await server.stop();
  await app.close();
  rmSync(dir, { recursive: true, force: true });
}

await main();
