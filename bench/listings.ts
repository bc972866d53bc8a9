// The rig listings with a large fleet, without the network namespace of bench/report-tail.ts: in
// process (the rig list, online_since / offline_since, the /rigs and /api/v1/rigs bodies over
// loopback) and `rigd rigs --json` (needs dist/: npm run build). Run by hand:
//   node --import tsx bench/listings.ts
// Env: BENCH_FLEET (rigs, default 10000), BENCH_HISTORY_DAYS (default 7), BENCH_CLI_RUNS (default 7).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load.ts';
import { silentLogger } from '../src/log.ts';
import { createServer } from '../src/server/server.ts';
import { openApp } from '../src/services/app.ts';
import { withStretches } from '../src/services/rigs/availability.ts';
import { closedPort } from '../test/helpers/storage.ts';
import { seedFleet } from './tail/seed.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FLEET = Number(process.env.BENCH_FLEET ?? 10_000);
const DAYS = Number(process.env.BENCH_HISTORY_DAYS ?? 7);
const CLI_RUNS = Number(process.env.BENCH_CLI_RUNS ?? 7);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dataDir = mkdtempSync(path.join(tmpdir(), 'rigd-bench-listings-'));
const port = await closedPort();
const { config } = loadConfig({ env: {}, overrides: { data_dir: dataDir, vpn: { cidr: '127.0.0.0/8' }, log: { level: 'silent' } } });
const app = await openApp(config);
const server = await createServer(app, { host: '127.0.0.1', port, log: silentLogger });
await server.start();
try {
  await seedFleet(dataDir, 0, FLEET, DAYS);
  const user = await app.users.create({ username: 'bench', email: 'bench@example.com', password: 'bench-password-1' });
  const { token } = await app.sessions.login(user.username, 'bench-password-1', '127.0.0.1');
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
    const res = await fetch(`http://127.0.0.1:${port}${url}`, { headers });
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
    await res.text();
  };
  const out: string[] = [`${FLEET} rigs, ${DAYS} days of history; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`];
  out.push(`list (in process): ${await time(7, () => app.rigs.list())}`);
  out.push(`list + stretches (in process): ${await time(7, async () => withStretches(app.db.reader, config, await app.rigs.list(), new Date()))}`);
  out.push(`GET /rigs: ${await time(12, get('/rigs'))}`);
  out.push(`GET /api/v1/rigs: ${await time(12, get('/api/v1/rigs', { authorization: `Bearer ${token}` }))}`);
  const cli = () =>
    new Promise<void>((resolve, reject) =>
      execFile(path.join(ROOT, 'bin/rigd'), ['rigs', '--json'], { env: { ...process.env, RIGD_DATA_DIR: dataDir }, maxBuffer: 256 * 1024 * 1024 }, (err, stdout) => {
        if (err) return reject(err);
        JSON.parse(stdout);
        resolve();
      }),
    );
  out.push(`rigd rigs --json: ${await time(CLI_RUNS, cli)}`);
  out.push(`load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  process.stdout.write(`${out.join('\n')}\n`);
  if (process.env.BENCH_KEEP) process.stdout.write(`data_dir kept: ${dataDir}\n`);
} finally {
  await server.stop({ timeout: 1000 });
  await app.close();
  if (!process.env.BENCH_KEEP) rmSync(dataDir, { recursive: true, force: true });
}
