// Rig reports during a login storm: the latency of PUT /api/v1/rigs/:id while idle, then while 150
// logins for distinct names (none throttled) are being hashed at the production work factor, same
// server, same run. bcrypt and sqlite3 share libuv's thread pool; rigd caps hashing
// (auth.hash_concurrency) so that the database keeps free threads. Run by hand:
//   npm run bench:login-storm
//
// The VPN rule still runs: vpn.cidr is 127.0.0.0/8 and the Host 127.0.0.1, so that loopback passes
// it (bench only). Env: BENCH_IDLE_S (default 10), BENCH_CLIENTS (rigs reporting one after another,
// default 10), BENCH_LOGINS (default 150), BENCH_BCRYPT_COST (default 12, the production default),
// BENCH_HASH_CONCURRENCY (default: the config default). UV_THREADPOOL_SIZE: the npm script sets 16
// as bin/rigd does; set it yourself to measure another pool.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { loadConfig } from '../src/config/load.ts';
import { silentLogger } from '../src/log.ts';
import { createServer } from '../src/server/server.ts';
import { openApp } from '../src/services/app.ts';

const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 10);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 10);
const LOGINS = Number(process.env.BENCH_LOGINS ?? 150);
const COST = Number(process.env.BENCH_BCRYPT_COST ?? 12);
const HASH_CONCURRENCY = process.env.BENCH_HASH_CONCURRENCY;
const RIGS = 1000;
const BODY = 'rig_serial=SN-0042&gpsd_latitude=47.376887&gpsd_longitude=8.541694&local_ip=192.168.8.20&software_version=3.1.0&git_branch=main';

interface Phase {
  reports: number;
  failed: number;
  p50: number;
  p99: number;
  max: number;
  seconds: number;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

/** CLIENTS rigs, each reporting again as soon as answered, until `done()` says stop. */
async function reportUntil(url: string, done: () => boolean): Promise<Phase> {
  const latencies: number[] = [];
  let failed = 0;
  let n = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (!done()) {
        const t0 = performance.now();
        try {
          const res = await request(`${url}/api/v1/rigs/rig${n++ % RIGS}`, {
            method: 'PUT',
            headers: { host: '127.0.0.1', 'content-type': 'application/x-www-form-urlencoded' },
            body: BODY,
          });
          await res.body.text();
          if (res.statusCode !== 200) failed++;
        } catch {
          // A connection closed under the request (a keep-alive socket the server let go): a failure.
          failed++;
        }
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const sorted = latencies.sort((a, b) => a - b);
  return {
    reports: sorted.length,
    failed,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? 0,
    seconds: (performance.now() - started) / 1000,
  };
}

const fmt = (n: number, d = 1) => n.toFixed(d);
const line = (name: string, p: Phase) =>
  `${name} ${p.reports} reports in ${fmt(p.seconds)} s: p50 ${fmt(p.p50)} ms  p99 ${fmt(p.p99)} ms  max ${fmt(p.max)} ms  (non-200 or no answer: ${p.failed})\n`;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'rigd-bench-'));
  const auth: Record<string, number> = { bcrypt_cost: COST, max_failures_per_login: 100_000, max_failures_per_client: 100_000 };
  if (HASH_CONCURRENCY) auth.hash_concurrency = Number(HASH_CONCURRENCY);
  const { config } = loadConfig({
    env: {},
    overrides: { data_dir: dataDir, vpn: { cidr: '127.0.0.0/8' }, log: { level: 'silent' }, auth },
  });
  const app = await openApp(config);
  const rigd = await createServer(app, { host: '127.0.0.1', port: 0, log: silentLogger });
  await rigd.start();
  const url = `http://127.0.0.1:${rigd.info.port}`;
  const cap = (config.auth as { hash_concurrency?: number }).hash_concurrency;
  try {
    process.stdout.write(
      `login storm: ${LOGINS} logins for distinct names, bcrypt cost ${COST}, hash_concurrency ${cap ?? 'none (uncapped)'}, ` +
        `UV_THREADPOOL_SIZE ${process.env.UV_THREADPOOL_SIZE ?? '4 (libuv default)'}; ${CLIENTS} rigs reporting back to back; ` +
        `${cpus().length} CPUs, node ${process.version}\n`,
    );
    // Warm-up: JIT, connections, the rigs registered, the timing equaliser's hash.
    let until = performance.now() + 2000;
    await reportUntil(url, () => performance.now() > until);
    await request(`${url}/api/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"login":"warm","password":"wrong-password"}' }).then((r) => r.body.text());

    until = performance.now() + IDLE_S * 1000;
    const idle = await reportUntil(url, () => performance.now() > until);

    const statuses = new Map<string, number>();
    let answered = 0;
    const stormStart = performance.now();
    const logins = Array.from({ length: LOGINS }, (_, i) =>
      request(`${url}/api/v1/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ login: `storm${i}`, password: 'wrong-password' }),
        headersTimeout: 0,
        bodyTimeout: 0,
      })
        .then(async (r) => {
          await r.body.text();
          return String(r.statusCode);
        })
        .catch((err: { code?: string }) => err.code ?? 'error')
        .then((status) => {
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          answered++;
        }),
    );
    const storm = await reportUntil(url, () => answered >= LOGINS);
    await Promise.all(logins);
    const stormS = (performance.now() - stormStart) / 1000;

    process.stdout.write(line('idle:       ', idle));
    process.stdout.write(line('login storm:', storm));
    const answers = [...statuses].map(([status, n]) => `${n} x ${status}`).join(', ');
    process.stdout.write(`the storm: ${LOGINS} logins answered in ${fmt(stormS)} s (${answers})\n`);
    process.stdout.write(`${JSON.stringify({ cost: COST, hashConcurrency: cap ?? null, uvThreadpool: process.env.UV_THREADPOOL_SIZE ?? null, idle, storm, stormS, logins: Object.fromEntries(statuses) })}\n`);
  } finally {
    await rigd.stop();
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
