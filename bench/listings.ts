// The rig listings with a large fleet, as shipped: `bin/rigd serve` in its own process with the
// default config over a data_dir seeded with BENCH_FLEET rigs and their history (`rigd migrate`,
// then bulk SQL through a connection of the bench's own, before serve starts); /rigs and
// /api/v1/rigs fetched from the gateway's rig-side address (a rig network namespace's gateway,
// 10.144.49.1: the VPN rule), and `rigd rigs --json`. Run by hand (needs dist/, root, iproute2):
//   npm run build && node --import tsx bench/listings.ts
// Env: BENCH_FLEET (rigs, default 10000), BENCH_HISTORY_DAYS (default 7), BENCH_CLI_RUNS (default 7).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createHosts } from '../test/helpers/netns.ts';
import { RIGD, startRigd } from './serve/rigd.ts';
import { seedFleet } from './tail/seed.ts';

const FLEET = Number(process.env.BENCH_FLEET ?? 10_000);
const DAYS = Number(process.env.BENCH_HISTORY_DAYS ?? 7);
const CLI_RUNS = Number(process.env.BENCH_CLI_RUNS ?? 7);
const GW = '10.144.49.1';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const work = mkdtempSync(path.join(tmpdir(), 'rigd-bench-listings-'));
const dataDir = path.join(work, 'data');
mkdirSync(dataDir);
const cli = (args: string[], input = '') =>
  new Promise<string>((resolve, reject) => {
    const child = execFile(RIGD, args, { env: { PATH: process.env.PATH, HOME: process.env.HOME, RIGD_DATA_DIR: dataDir }, maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`rigd ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
    child.stdin?.end(input);
  });

const net = await createHosts([{ name: 'rigs', addr: '10.144.49.2', gw: GW }]);
let stop = async () => {};
try {
  await cli(['migrate']);
  await seedFleet(dataDir, 0, FLEET, DAYS);
  await cli(['user', 'add', 'bench', '--email', 'bench@example.com', '--password-stdin'], 'bench-password-1\n');
  const rigd = await startRigd({ dataDir, logFile: path.join(work, 'rigd.log') });
  stop = async () => void (await rigd.stop());
  const base = `http://${GW}:${rigd.port}`;
  const session = await fetch(`${base}/api/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'bench', password: 'bench-password-1' }) });
  if (session.status !== 200) throw new Error(`login: ${session.status} ${await session.text()}`);
  const { token } = (await session.json()) as { token: string };
  const time = async (n: number, fn: () => Promise<unknown>) => {
    const xs: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await fn();
      xs.push(performance.now() - t0);
    }
    return `p50 ${median(xs.slice(Math.min(2, n - 1))).toFixed(0)} ms (first ${xs[0].toFixed(0)} ms)`;
  };
  const get = (url: string, headers: Record<string, string> = {}) => async () => {
    const res = await fetch(`${base}${url}`, { headers });
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
    await res.text();
  };
  const out: string[] = [`${FLEET} rigs, ${DAYS} days of history, rigd serve as shipped; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`];
  out.push(`GET /rigs: ${await time(12, get('/rigs'))}`);
  out.push(`GET /api/v1/rigs: ${await time(12, get('/api/v1/rigs', { authorization: token }))}`);
  out.push(`rigd rigs --json: ${await time(CLI_RUNS, async () => JSON.parse(await cli(['rigs', '--json'])))}`);
  out.push(`load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  await stop();
  await net.destroy();
  if (process.env.BENCH_KEEP) process.stdout.write(`data_dir kept: ${dataDir}\n`);
  else rmSync(work, { recursive: true, force: true });
}
