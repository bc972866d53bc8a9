// Rig reports on one rigd node vs two, same run: req/s, p50, p99, errors, history rows == 2xx answers.
// Run by hand: npm run bench:nodes (builds first: the nodes are `bin/rigd serve` processes; needs root
// for the network namespace and PostgreSQL's server binaries, as bench:engines).
//
// Each setup gets a fresh database on a throwaway PostgreSQL cluster (bench/engines/pg-cluster.ts,
// default durability) and s3rver as the object store (storage.driver minio), through
// test/helpers/cluster.ts. The load (bench/tail/load.ts, autocannon) runs in a rig network namespace
// (10.144.131.2, vpn.cidr 10.144.131.0/24): one process of CONNECTIONS connections against the one
// node, or two processes of CONNECTIONS/2 against one node each. Both setups answer the same number
// of requests (the one node's warm-up rate times BENCH_DURATION), every one answered, so rows must
// equal 2xx. Everything (PostgreSQL, the nodes, the load) shares this machine's CPUs.
// Env: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 100).
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster, type Cluster } from '../test/helpers/cluster.ts';
import { startPgCluster } from './engines/pg-cluster.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const RIGS = 1000;
const RIG_NET = { addr: '10.144.131.2', gw: '10.144.131.1', cidr: '10.144.131.0/24' };

interface Run {
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

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

/** Runs `length` on every node of c at once, CONNECTIONS split evenly; answers per second summed. */
async function loadAll(c: Cluster, length: (share: number) => string): Promise<Run & { wall: number }> {
  const per = Math.round(CONNECTIONS / c.nodes.length);
  const started = Date.now();
  const runs = await Promise.all(c.nodes.map((n) => load(c, n.rigUrl, per, length(c.nodes.length))));
  return {
    rps: runs.reduce((s, r) => s + r.rps, 0),
    // The worse of the loads' percentiles (autocannon's histograms are not merged).
    p50: Math.max(...runs.map((r) => r.p50)),
    p99: Math.max(...runs.map((r) => r.p99)),
    ok: runs.reduce((s, r) => s + r.ok, 0),
    non2xx: runs.reduce((s, r) => s + r.non2xx, 0),
    errors: runs.reduce((s, r) => s + r.errors, 0),
    timeouts: runs.reduce((s, r) => s + r.timeouts, 0),
    wall: (Date.now() - started) / 1000,
  };
}

const reports = async (c: Cluster) => Number((await c.query<{ n: string }>('SELECT count(*) AS n FROM rig_reports'))[0]!.n);

interface Result {
  label: string;
  run: Run & { wall: number };
  rows: number;
}

/** Starts the nodes, warms them up (3 s), then runs amount(warm-up rate) requests split across them. */
async function measure(label: string, ids: string[], databaseUrl: string, amount: (warmRps: number) => number): Promise<Result> {
  const c = await startCluster({ ids, databaseUrl, rigNet: RIG_NET, config: { log: { level: 'warn' } } });
  try {
    const warm = await loadAll(c, () => '3');
    const before = await reports(c);
    const total = amount(warm.rps);
    const run = await loadAll(c, (n) => `n${Math.round(total / n)}`);
    return { label, run, rows: (await reports(c)) - before };
  } finally {
    await c.close();
  }
}

const pg = await startPgCluster();
let failed = false;
try {
  // The same number of requests for both setups: the one node's warm-up rate times DURATION.
  let amount = 0;
  const results: Result[] = [
    await measure('one node', ['node-a'], await pg.createDatabase('rigd_bench_one'), (rps) => (amount = Math.max(2000, Math.round(rps * DURATION)))),
  ];
  results.push(await measure(`two nodes (${CONNECTIONS / 2} connections each)`, ['node-a', 'node-b'], await pg.createDatabase('rigd_bench_two'), () => amount));
  const pad = (s: string, n: number) => s.padEnd(n);
  const out = [
    `rig reports, one rigd node vs two: ${CONNECTIONS} connections in all from a rig namespace, ${RIGS} rigs, ${amount} requests per setup, PostgreSQL ${pg.version.split(' ')[0]}, s3rver, ${cpus().length} CPUs, node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
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
