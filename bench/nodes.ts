// Rig reports on one rigd node vs two, same run: req/s, p50, p99, errors, history rows == 2xx answers.
// Run by hand: npm run bench:nodes (builds first: the nodes are `bin/rigd serve` processes; needs root
// for the network namespace and PostgreSQL's server binaries, as bench:engines).
//
// Each setup gets a fresh database on a throwaway PostgreSQL cluster (bench/engines/pg-cluster.ts,
// default durability) and s3rver as the object store (storage.driver minio), through
// test/helpers/cluster.ts. The load (bench/tail/load.ts, autocannon) runs in a rig network namespace
// (10.144.131.2, vpn.cidr 10.144.131.0/24): one process of CONNECTIONS connections against the one
// node, or two processes of CONNECTIONS/2 against one node each (half the requests each). Both
// setups answer the same number of requests after the same warm-up, every one answered, so rows must
// equal 2xx. Everything (PostgreSQL, the nodes, the load) shares this machine's CPUs.
// Env: BENCH_REQUESTS (default 10000), BENCH_CONNECTIONS (default 100).
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster, type Cluster } from '../test/helpers/cluster.ts';
import { startPgCluster } from './engines/pg-cluster.ts';
import type { LoadRun } from './tail/run.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REQUESTS = Math.round(Number(process.env.BENCH_REQUESTS ?? 10_000) / 2) * 2;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const RIGS = 1000;
const RIG_NET = { addr: '10.144.131.2', gw: '10.144.131.1', cidr: '10.144.131.0/24' };

type Run = LoadRun;

/** One autocannon process inside the rigs' namespace: `${seconds}` or `n${amount}` requests. */
function load(c: Cluster, url: string, connections: number, length: string): Promise<Run> {
  const child = spawn('ip', ['netns', 'exec', c.net.host('rig').ns, process.execPath, '--import', 'tsx', path.join(ROOT, 'bench/tail/load.ts'), url, RIG_NET.gw, String(connections), length, String(RIGS)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as Run) : reject(new Error(`load exited ${code}: ${out}`)))));
}

/** Runs `length` on every node of c at once, CONNECTIONS split evenly; req/s = all answers over the longest load's time. */
async function loadAll(c: Cluster, length: (share: number) => string): Promise<Run> {
  const per = Math.round(CONNECTIONS / c.nodes.length);
  const runs = await Promise.all(c.nodes.map((n) => load(c, n.rigUrl, per, length(c.nodes.length))));
  const answers = (r: Run) => r.ok + r.non2xx;
  return {
    rps: runs.reduce((s, r) => s + answers(r), 0) / Math.max(...runs.map((r) => answers(r) / r.rps)),
    // The worse of the loads' percentiles (autocannon's histograms are not merged).
    p50: Math.max(...runs.map((r) => r.p50)),
    p99: Math.max(...runs.map((r) => r.p99)),
    max: Math.max(...runs.map((r) => r.max)),
    ok: runs.reduce((s, r) => s + r.ok, 0),
    non2xx: runs.reduce((s, r) => s + r.non2xx, 0),
    errors: runs.reduce((s, r) => s + r.errors, 0),
    timeouts: runs.reduce((s, r) => s + r.timeouts, 0),
  };
}

const reports = async (c: Cluster) => Number((await c.query<{ n: string }>('SELECT count(*) AS n FROM rig_reports'))[0]!.n);

interface Result {
  label: string;
  run: Run;
  rows: number;
}

/** Warm-up requests per setup: a fixed amount (not a duration), so that none is still in flight when the rows are counted. */
const WARM_UP = 2000;

/** Starts the nodes, warms them up, then runs REQUESTS requests split across them. */
async function measure(label: string, ids: string[], databaseUrl: string): Promise<Result> {
  const c = await startCluster({ ids, databaseUrl, rigNet: RIG_NET, config: { log: { level: 'warn' }, rigs: { new_ids_per_address_per_hour: 10_000_000 } } });
  try {
    await loadAll(c, (n) => `n${Math.round(WARM_UP / n)}`);
    const before = await reports(c);
    const run = await loadAll(c, (n) => `n${REQUESTS / n}`);
    return { label, run, rows: (await reports(c)) - before };
  } finally {
    await c.close();
  }
}

const pg = await startPgCluster();
let failed = false;
try {
  const results: Result[] = [
    await measure('one node', ['node-a'], await pg.createDatabase('rigd_bench_one')),
    await measure(`two nodes (${CONNECTIONS / 2} connections each)`, ['node-a', 'node-b'], await pg.createDatabase('rigd_bench_two')),
  ];
  const pad = (s: string, n: number) => s.padEnd(n);
  const out = [
    `rig reports, one rigd node vs two: ${CONNECTIONS} connections in all from a rig namespace, ${RIGS} rigs, ${REQUESTS} requests per setup (after ${WARM_UP} to warm up), PostgreSQL ${pg.version.split(' ')[0]}, s3rver, ${cpus().length} CPUs, node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    `| ${pad('setup', 34)} | ${pad('req/s', 7)} | ${pad('p50', 7)} | ${pad('p99', 7)} | ${pad('errors', 6)} | ${pad('rows vs 2xx', 17)} |`,
    `|${'-'.repeat(36)}|${'-'.repeat(9)}|${'-'.repeat(9)}|${'-'.repeat(9)}|${'-'.repeat(8)}|${'-'.repeat(19)}|`,
  ];
  for (const r of results) {
    const errors = r.run.errors + r.run.timeouts + r.run.non2xx;
    if (errors > 0 || r.rows !== r.run.ok) failed = true;
    out.push(
      `| ${pad(r.label, 34)} | ${pad(r.run.rps.toFixed(0), 7)} | ${pad(`${r.run.p50} ms`, 7)} | ${pad(`${r.run.p99} ms`, 7)} | ${pad(String(errors), 6)} | ${pad(`${r.rows} = ${r.run.ok}${r.rows === r.run.ok ? '' : ' (!)'}`, 17)} |`,
    );
  }
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  pg.stop();
}
process.exitCode = failed ? 1 : 0;
