// Rig reports on SQLite and on PostgreSQL, same run, against a bare hapi PUT route: req/s, p50, p99,
// errors, history rows == 2xx answers. Run by hand: npm run bench:engines (needs PostgreSQL's server
// binaries: Debian's postgresql package; as root the cluster runs as the postgres user).
//
// The load generator (bench/tail/load.ts, autocannon) runs in a process of its own over loopback;
// for this bench vpn.cidr is 127.0.0.0/8 so that loopback passes the VPN rule. The PostgreSQL cluster
// is a throwaway one on this machine with the server's default durability (a COMMIT waits for its
// WAL flush); SQLite runs as rigd always does (WAL, synchronous = NORMAL). SQLite has one writer:
// report batches group-commit in turn with every other write. PostgreSQL is measured that way too
// ("group commit") and with up to 4 report batches committing at once on the pool (its default).
// Env: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 100).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load.ts';
import { silentLogger } from '../src/log.ts';
import { createServer } from '../src/server/server.ts';
import { openApp } from '../src/services/app.ts';
import { startPgCluster } from './engines/pg-cluster.ts';
import { bareServer } from './tail/bare.ts';
import type { LoadRun } from './tail/run.ts';

// rigd serve runs without source maps (bin/rigd); tsx turns them on.
process.setSourceMapsEnabled(false);

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const RIGS = 1000;

type Run = LoadRun;

/** One autocannon run in its own process: `${seconds}` or `n${amount}` requests. */
function load(url: string, length: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/tail/load.ts'), url, '127.0.0.1', String(CONNECTIONS), length, String(RIGS)], { cwd: ROOT, maxBuffer: 1 << 20 }, (err, stdout) =>
      err ? reject(err) : resolve(JSON.parse(stdout) as Run),
    );
  });
}


interface EngineResult {
  engine: string;
  run: Run;
  rows: number;
  batchMean: number;
}

/** rigd on one database: warm-up, then a fixed number of requests (about DURATION s), every one answered. */
async function measure(engine: string, databaseUrl: string, reportWriters?: number): Promise<EngineResult> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'rigd-bench-engines-'));
  const { config } = loadConfig({ env: {}, overrides: { data_dir: dataDir, database: { url: databaseUrl }, vpn: { cidr: '127.0.0.0/8' }, log: { level: 'silent' } } });
  const app = await openApp(config, { reportWriters });
  const server = await createServer(app, { host: '127.0.0.1', port: 0, log: silentLogger });
  await server.start();
  const url = `http://127.0.0.1:${server.info.port}`;
  try {
    const warm = await load(url, '3');
    await app.db.writes.drain();
    const before = await app.db.models.RigReport.count();
    let items = 0;
    let batches = 0;
    app.db.writes.observe({ batch: (size) => ((items += size), batches++) });
    const run = await load(url, `n${Math.max(1000, Math.round(warm.rps * DURATION))}`);
    await app.db.writes.drain();
    const rows = (await app.db.models.RigReport.count()) - before;
    return { engine, run, rows, batchMean: batches ? items / batches : 0 };
  } finally {
    await server.stop();
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const pad = (s: string, n: number) => s.padEnd(n);
const cluster = await startPgCluster();
let failed = false;
try {
  const pgUrl = await cluster.createDatabase('rigd_bench');
  const bare = await bareServer();
  await load(`http://127.0.0.1:${bare.info.port}`, '2');
  const b = await load(`http://127.0.0.1:${bare.info.port}`, String(DURATION));
  await bare.stop();
  const pg = `PostgreSQL ${cluster.version.split(' ')[0]}`;
  const results = [
    await measure('SQLite (data_dir)', ''),
    await measure(`${pg}, group commit`, pgUrl, 1),
    await measure(`${pg}, 4 batches at once`, await cluster.createDatabase('rigd_bench_pool'), 4),
  ];
  const out = [
    `rig reports by engine: ${CONNECTIONS} connections over loopback, ${RIGS} rigs, ${DURATION} s runs, ${cpus().length} CPUs, node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    `| ${pad('database', 35)} | ${pad('req/s', 7)} | ${pad('vs bare', 7)} | ${pad('p50', 6)} | ${pad('p99', 6)} | ${pad('errors', 6)} | ${pad('rows vs 2xx', 15)} | batch (mean) |`,
    `|${'-'.repeat(37)}|${'-'.repeat(9)}|${'-'.repeat(9)}|${'-'.repeat(8)}|${'-'.repeat(8)}|${'-'.repeat(8)}|${'-'.repeat(17)}|--------------|`,
    `| ${pad('bare hapi PUT (reference)', 35)} | ${pad(b.rps.toFixed(0), 7)} | ${pad('1', 7)} | ${pad(`${b.p50} ms`, 6)} | ${pad(`${b.p99} ms`, 6)} | ${pad(String(b.errors + b.timeouts + b.non2xx), 6)} | ${pad('', 15)} |              |`,
  ];
  for (const r of results) {
    const errors = r.run.errors + r.run.timeouts + r.run.non2xx;
    if (errors > 0 || r.rows !== r.run.ok) failed = true;
    out.push(
      `| ${pad(r.engine, 35)} | ${pad(r.run.rps.toFixed(0), 7)} | ${pad(`${(r.run.rps / b.rps).toFixed(2)} x`, 7)} | ${pad(`${r.run.p50} ms`, 6)} | ${pad(`${r.run.p99} ms`, 6)} | ${pad(String(errors), 6)} | ${pad(`${r.rows} = ${r.run.ok}${r.rows === r.run.ok ? '' : ' (!)'}`, 15)} | ${r.batchMean.toFixed(0).padStart(12)} |`,
    );
  }
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  cluster.stop();
}
process.exitCode = failed ? 1 : 0;
