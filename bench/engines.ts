// Rig reports on SQLite and on PostgreSQL, same run, against a bare hapi PUT route: req/s, p50, p99,
// errors, history rows == 2xx answers. Run by hand: npm run bench:engines (builds dist/; needs root,
// iproute2 and PostgreSQL's server binaries: Debian's postgresql package; as root the cluster runs as
// the postgres user).
//
// As shipped: `bin/rigd serve` as its own process with the default config, once on SQLite in its
// data_dir and once with database.url on a throwaway PostgreSQL cluster on this machine (the
// server's default durability: a COMMIT waits for its WAL flush); the bare route in a process of
// its own; the load (bench/tail/load.ts, autocannon) from a rig network namespace (10.144.48.0/24).
// Env: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 100), BENCH_RIGS (default 1000).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createHosts } from '../test/helpers/netns.ts';
import { startBaseline } from './serve/baseline.ts';
import { openEngine, type Engine } from './serve/engine.ts';
import { failures, loadRun, type LoadSpec } from './serve/load.ts';
import { startRigd } from './serve/rigd.ts';
import { countReports, settledCount } from './serve/rows.ts';
import type { LoadRun } from './tail/run.ts';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const RIGS = Number(process.env.BENCH_RIGS ?? 1000);
const GW = '10.144.48.1';
const loads = () => loadavg().map((l) => l.toFixed(2)).join(' ');

interface EngineResult {
  label: string;
  run: LoadRun;
  rows: number;
}

const work = mkdtempSync(path.join(tmpdir(), 'rigd-bench-engines-'));
const net = await createHosts([{ name: 'rigs', addr: '10.144.48.2', gw: GW }]);
const spec: LoadSpec = { net, from: 'rigs', host: GW, connections: CONNECTIONS, rigs: RIGS };

/** rigd serve on one engine: warm-up, then a fixed number of requests (about DURATION s), every one answered. */
async function measure(engine: Engine): Promise<EngineResult> {
  const db = await openEngine(engine, 'rigd_bench_engines');
  const dataDir = path.join(work, engine);
  mkdirSync(dataDir);
  try {
    const rigd = await startRigd({ dataDir, databaseUrl: db.url, env: { RIGD_RIGS_NEW_IDS_PER_ADDRESS_PER_HOUR: '10000000' }, logFile: path.join(work, `${engine}.log`) });
    try {
      const url = `http://${GW}:${rigd.port}`;
      const warm = await loadRun(spec, url, '3');
      const before = await settledCount(dataDir, db.url);
      const run = await loadRun(spec, url, `n${Math.max(1000, Math.round(warm.rps * DURATION))}`);
      return { label: db.label, run, rows: (await countReports(dataDir, db.url)) - before };
    } finally {
      await rigd.stop();
    }
  } finally {
    db.stop();
  }
}

const pad = (s: string, n: number) => s.padEnd(n);
let failed = false;
try {
  const load0 = loads();
  const bare = await startBaseline(GW);
  let b: LoadRun;
  try {
    await loadRun(spec, `http://${GW}:${bare.port}`, '2');
    b = await loadRun(spec, `http://${GW}:${bare.port}`, String(DURATION));
  } finally {
    await bare.stop();
  }
  const results = [await measure('sqlite'), await measure('postgres')];
  const out = [
    `rig reports by engine, rigd serve as shipped: ${CONNECTIONS} connections from a rig network namespace, ${RIGS} rigs, ${DURATION} s runs, ${cpus().length} CPUs, node ${process.version}, load average ${load0} at the start, ${loads()} at the end`,
    `| ${pad('database', 28)} | ${pad('req/s', 7)} | ${pad('vs bare', 7)} | ${pad('p50', 6)} | ${pad('p99', 6)} | ${pad('errors', 6)} | rows vs 2xx     |`,
    `|${'-'.repeat(30)}|${'-'.repeat(9)}|${'-'.repeat(9)}|${'-'.repeat(8)}|${'-'.repeat(8)}|${'-'.repeat(8)}|-----------------|`,
    `| ${pad('bare hapi PUT (reference)', 28)} | ${pad(b.rps.toFixed(0), 7)} | ${pad('1', 7)} | ${pad(`${b.p50} ms`, 6)} | ${pad(`${b.p99} ms`, 6)} | ${pad(String(failures(b)), 6)} |                 |`,
  ];
  for (const r of results) {
    if (failures(r.run) > 0 || r.rows !== r.run.ok) failed = true;
    out.push(
      `| ${pad(r.label, 28)} | ${pad(r.run.rps.toFixed(0), 7)} | ${pad(`${(r.run.rps / b.rps).toFixed(2)} x`, 7)} | ${pad(`${r.run.p50} ms`, 6)} | ${pad(`${r.run.p99} ms`, 6)} | ${pad(String(failures(r.run)), 6)} | ${pad(`${r.rows} = ${r.run.ok}${r.rows === r.run.ok ? '' : ' (!)'}`, 15)} |`,
    );
  }
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  await net.destroy();
  rmSync(work, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
