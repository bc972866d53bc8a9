// Rig report throughput: rigd's PUT /api/v1/rigs/:id (guard, form parsing, validation, group commit
// through Sequelize on SQLite) against a bare hapi PUT route answering "Ok", same machine, same run.
// Then GET /rigs rendered with 1,000 rigs. Run by hand: npm run bench:rigs
//
// The VPN rule still runs: for this bench vpn.cidr is 127.0.0.0/8 and the Host is 127.0.0.1, so
// loopback clients pass it. Env: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 100).
import autocannon from 'autocannon';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/load.ts';
import { silentLogger } from '../src/log.ts';
import { createServer } from '../src/server/server.ts';
import { openApp } from '../src/services/app.ts';
import { bareServer } from './tail/bare.ts';
import { loadRun, type LoadRun } from './tail/run.ts';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const RIGS = 1000;
const BODY = 'rig_serial=SN-0042&gpsd_latitude=47.376887&gpsd_longitude=8.541694&local_ip=192.168.8.20&software_version=3.1.0&git_branch=main';

type Run = LoadRun;

/** duration in seconds, or { amount } requests (all answered before it resolves). */
async function load(url: string, duration: number | { amount: number }): Promise<Run> {
  let n = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    ...(typeof duration === 'number' ? { duration } : { amount: duration.amount }),
    method: 'PUT',
    headers: { host: '127.0.0.1', 'content-type': 'application/x-www-form-urlencoded' },
    body: BODY,
    requests: [
      {
        setupRequest: (req) => {
          req.path = `/api/v1/rigs/rig${n++ % RIGS}`;
          return req;
        },
      },
    ],
  });
  return loadRun(result);
}


const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n: number, d = 1) => n.toFixed(d);

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'rigd-bench-'));
  const { config } = loadConfig({ env: {}, overrides: { data_dir: dataDir, vpn: { cidr: '127.0.0.0/8' }, log: { level: 'silent' }, rigs: { new_ids_per_address_per_hour: 10_000_000 } } });
  const app = await openApp(config);
  const rigd = await createServer(app, { host: '127.0.0.1', port: 0, log: silentLogger });
  await rigd.start();
  const bare = await bareServer();
  const rigdUrl = `http://127.0.0.1:${rigd.info.port}`;
  const bareUrl = `http://127.0.0.1:${bare.info.port}`;
  const { RigReport } = app.db.models;

  try {
    process.stdout.write(`rig reports: ${CONNECTIONS} connections, ${RIGS} distinct rigs, ${DURATION} s each, ${cpus().length} CPUs, node ${process.version}\n`);
    process.stdout.write('VPN rule active with vpn.cidr 127.0.0.0/8 and Host 127.0.0.1 so that loopback passes it (bench only)\n');
    // Warm-up: JIT, connections, the 1,000 rigs registered (their first insert is not the steady state).
    await load(bareUrl, 2);
    const warm = await load(rigdUrl, 2);
    // Requests cut off by the end of a timed run may still commit: let them, then count.
    await new Promise((r) => setTimeout(r, 500));
    await app.db.writes.drain();
    const rowsBefore = await RigReport.count();
    const b = await load(bareUrl, DURATION);
    // A fixed number of requests lasting about DURATION s, every one answered, so that the history
    // rows can be compared exactly with the 2xx answers.
    const r = await load(rigdUrl, { amount: Math.min(500_000, Math.round(warm.rps * DURATION)) });
    await app.db.writes.drain();
    const rows = (await RigReport.count()) - rowsBefore;

    const ratio = r.rps / b.rps;
    const p99Limit = 1.5 * b.p99 + 15;
    const checks = {
      ratio: ratio >= 0.3,
      p99: r.p99 <= p99Limit,
      errors: r.errors + r.timeouts + r.non2xx === 0,
      rows: rows === r.ok,
    };
    process.stdout.write(`bare hapi PUT:  ${fmt(b.rps, 0)} req/s  p50 ${b.p50} ms  p99 ${b.p99} ms  (2xx ${b.ok}, errors ${b.errors + b.timeouts + b.non2xx})\n`);
    process.stdout.write(`rigd report:    ${fmt(r.rps, 0)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  (2xx ${r.ok}, non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts})\n`);
    process.stdout.write(`ratio rigd/bare ${fmt(ratio, 3)} (target >= 0.3) ${checks.ratio ? 'ok' : 'MISSED'}\n`);
    process.stdout.write(`p99 ${r.p99} ms vs limit 1.5 x ${b.p99} + 15 = ${fmt(p99Limit)} ms ${checks.p99 ? 'ok' : 'MISSED'}\n`);
    process.stdout.write(`errors: ${checks.errors ? 'none, ok' : 'SOME'}; history rows ${rows} vs 2xx ${r.ok} ${checks.rows ? 'ok' : 'MISMATCH'}\n`);

    // GET /rigs with 1,000 rigs: server time (X-Runtime) and client time, sequential requests.
    const rigCount = await app.db.models.Rig.count();
    const server: number[] = [];
    const client: number[] = [];
    for (let i = 0; i < 60; i++) {
      const t0 = performance.now();
      const res = await fetch(`${rigdUrl}/rigs`, { headers: { host: '127.0.0.1' } });
      const html = await res.text();
      client.push(performance.now() - t0);
      if (res.status !== 200 || !html.includes('rig999')) throw new Error(`GET /rigs answered ${res.status}`);
      server.push(Number(res.headers.get('x-runtime')) * 1000);
    }
    const pageOk = median(client.slice(10)) < 50;
    process.stdout.write(
      `GET /rigs with ${rigCount} rigs: p50 ${fmt(median(server.slice(10)))} ms server (X-Runtime), ${fmt(median(client.slice(10)))} ms client (target < 50 ms) ${pageOk ? 'ok' : 'MISSED'}\n`,
    );
    process.stdout.write(
      `${JSON.stringify({ bare: b, rigd: r, ratio, p99Limit, historyRows: rows, rigsPage: { rigs: rigCount, p50ServerMs: median(server.slice(10)), p50ClientMs: median(client.slice(10)) } })}\n`,
    );
    process.exitCode = Object.values(checks).every(Boolean) && pageOk ? 0 : 1;
  } finally {
    await bare.stop();
    await rigd.stop();
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
