// Two builds of rigd compared on the report path, in turn: `bin/rigd serve` of each (its own
// process, the default config, its log as shipped into a file) runs at once, and autocannon from a rig
// network namespace (10.144.221.2; 100 connections, 1,000 rig ids) sends each AB_N reports in turn,
// AB_ROUNDS rounds, the order reversed every other round. It prints each build's CPU per report
// (user + system from /proc) per round and their medians: on a machine shared with other work the
// load drifts within minutes, and runs of both builds close in time keep that drift out of the
// comparison (docs/perf/report-path.md#cuts-measured).
//   node --import tsx bench/report-ab.ts [--engine sqlite|postgres] ROOT_A ROOT_B
// ROOT: a built checkout (bin/rigd and dist/ there, e.g. a git worktree after `npm run build`).
// Env: AB_ROUNDS (default 5), AB_N (reports per run, default 3000), AB_SUBNET (the third octet of the
// rig network, default 221: two comparisons at once need two).
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createHosts } from '../test/helpers/netns.ts';
import { cpuMs, servePid } from './serve/cpu.ts';
import { engineFlag, openEngine } from './serve/engine.ts';
import { loadRun, type LoadSpec } from './serve/load.ts';

const args = process.argv.slice(2);
const roots = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--engine').map((a) => path.resolve(a));
if (roots.length < 2) throw new Error('usage: bench/report-ab.ts [--engine sqlite|postgres] ROOT_A ROOT_B');
const ROUNDS = Number(process.env.AB_ROUNDS ?? 5);
const N = Number(process.env.AB_N ?? 3000);
const SUBNET = Number(process.env.AB_SUBNET ?? 221);
const GW = `10.144.${SUBNET}.1`;
const engine = engineFlag(process.argv.slice(2));
const net = await createHosts([{ name: 'rigs', addr: `10.144.${SUBNET}.2`, gw: GW }]);
const spec: LoadSpec = { net, from: 'rigs', host: GW, connections: 100, rigs: 1000 };
const work = mkdtempSync(path.join(tmpdir(), 'rigd-ab-'));
const servers: { name: string; pid: number; port: number; kill: () => void; cpu: number[] }[] = [];
const dbs: { stop(): void }[] = [];
try {
  for (const [i, root] of roots.entries()) {
    const name = `${String.fromCharCode(65 + i)}:${path.basename(root)}`;
    const dataDir = path.join(work, String(i));
    mkdirSync(dataDir);
    const db = await openEngine(engine, `rigd_ab_${i}`);
    dbs.push(db);
    const log = path.join(work, `${i}.log`);
    const fd = openSync(log, 'a');
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, RIGD_DATA_DIR: dataDir, RIGD_RIGS_NEW_IDS_PER_ADDRESS_PER_HOUR: '10000000', ...(db.url ? { RIGD_DATABASE_URL: db.url, RIGD_CLUSTER_SINGLE_NODE: 'true' } : {}) };
    const child = spawn(process.execPath, ['--max-semi-space-size=32', path.join(root, 'bin', 'rigd'), 'serve', '--port', '0'], { env, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    let port = 0;
    for (let k = 0; k < 1200 && !port; k++) {
      const m = /rigd listening on http:\/\/[^\s"]*:(\d+)/.exec(readFileSync(log, 'utf8'));
      if (m) port = Number(m[1]);
      else await new Promise((r) => setTimeout(r, 50));
    }
    if (!port) throw new Error(readFileSync(log, 'utf8'));
    servers.push({ name, pid: servePid(dataDir), port, kill: () => child.kill('SIGTERM'), cpu: [] });
  }
  for (const s of servers) await loadRun(spec, `http://${GW}:${s.port}`, '3');
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? servers : [...servers].reverse();
    for (const s of order) {
      const c0 = cpuMs(s.pid);
      const run = await loadRun(spec, `http://${GW}:${s.port}`, `n${N}`);
      const us = Math.round(((cpuMs(s.pid) - c0) * 1000) / (run.ok + run.non2xx));
      s.cpu.push(us);
      process.stdout.write(`${s.name} round ${r + 1}: ${us} µs/request, ${Math.round(run.rps)} req/s, non2xx ${run.non2xx}, errors ${run.errors}, load ${loadavg()[0]!.toFixed(1)}\n`);
    }
  }
  for (const s of servers) {
    const sorted = [...s.cpu].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    const median = sorted.length % 2 === 1 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2);
    process.stdout.write(`${s.name}: ${s.cpu.join(', ')} µs; median ${median} µs\n`);
  }
} finally {
  for (const s of servers) s.kill();
  await new Promise((r) => setTimeout(r, 1000));
  await net.destroy();
  for (const d of dbs) d.stop();
  rmSync(work, { recursive: true, force: true });
}
