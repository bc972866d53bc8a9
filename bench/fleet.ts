// Availability and fleet summaries on a big history, as shipped: 10,000 rigs with a week of
// reports (one every 45 min, with holes; ~2.2M rows), seeded inside SQLite in one transaction (a
// recursive CTE, no per-row round trips) after `rigd migrate` and before `bin/rigd serve` starts as
// its own process with the default config (only data_dir set; request logging as shipped, into a
// file). Timed: GET /api/v1/rigs/ID (one rig with its offline periods and shares, as
// `rigd rigs show --json` prints it) and GET /api/v1/rigs (every rig with online_since /
// offline_since) by curl from a rig network namespace (10.144.189.2: the operator API follows the
// VPN rule) with an operator's token, GET /rigs/ID (the rig's page) from loopback, then
// `rigd rigs show ID --json`, `rigd fleet --json` (the fleet summary) and `rigd rigs --json` as
// whole processes beside the running serve, and rigd serve's RSS.
// Run by hand: npm run bench:fleet (builds dist/; needs root, iproute2, curl).
// Env: BENCH_RIGS (default 10000), BENCH_HTTP_RUNS (default 7), BENCH_KEEP=1.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DB_FILE } from '../src/db/file.ts';
import { createHosts, type Hosts } from '../test/helpers/netns.ts';
import { rssKb } from './proc.ts';
import { servePid } from './serve/cpu.ts';
import { describeRun, loads } from './serve/describe.ts';
import { RIGD, rigdCli, startRigd } from './serve/rigd.ts';

const RIGS = Number(process.env.BENCH_RIGS ?? 10_000);
const HTTP_RUNS = Number(process.env.BENCH_HTTP_RUNS ?? 7);
const GW = '10.144.189.1';
const STEP_S = 45 * 60;
const REPORTS = Math.floor((7 * 86400) / STEP_S);
/** A rig with a hole in its history that stopped reporting 6 h ago. */
const SHOWN = `rig${Math.floor((RIGS * 0.425) / 50) * 50}`;

const work = mkdtempSync(path.join(tmpdir(), 'rigd-bench-fleet-'));
const dataDir = path.join(work, 'data');
mkdirSync(dataDir);

async function seed(): Promise<number> {
  await rigdCli(dataDir, ['migrate']);
  const { default: sqlite3 } = await import('sqlite3');
  const conn = new sqlite3.Database(path.join(dataDir, DB_FILE));
  const exec = (sql: string) => new Promise<void>((resolve, reject) => conn.exec(sql, (err) => (err ? reject(err) : resolve())));
  const count = () => new Promise<number>((resolve, reject) => conn.get('SELECT COUNT(*) AS n FROM rig_reports', (err, row: { n: number }) => (err ? reject(err) : resolve(row.n))));
  const start = Math.floor(Date.now() / 1000) - REPORTS * STEP_S;
  const t = (expr: string) => `strftime('%Y-%m-%d %H:%M:%f', ${expr}, 'unixepoch') || ' +00:00'`;
  // Every 10th rig has a 4.5 h hole; every 50th stopped reporting 6 h ago; branches main/beta/stable;
  // on each branch a quarter of the rigs is still on the old version (the rest moved at report 150).
  const version = `CASE WHEN i % 4 = 0 OR k < 150 THEN '1.0' ELSE '1.1' END`;
  const branch = `CASE i % 3 WHEN 0 THEN 'main' WHEN 1 THEN 'beta' ELSE 'stable' END`;
  const keep = `NOT (i % 10 = 0 AND k BETWEEN (i % 200) + 1 AND (i % 200) + 6) AND NOT (i % 50 = 0 AND k > ${REPORTS - 8})`;
  await exec(`
    PRAGMA journal_mode = WAL;
    BEGIN;
    WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < ${RIGS - 1})
    INSERT INTO rigs (id, serial, lan_ip, vpn_address, version, branch, latitude, longitude, last_seen_at, current_project, created_at, updated_at)
    SELECT 'rig' || i, 'S-' || i, '192.168.1.' || (i % 250), '10.144.' || (i / 250) || '.' || (i % 250), CASE WHEN i % 4 = 0 THEN '1.0' ELSE '1.1' END, ${branch}, NULL, NULL,
           ${t(`${start} + (CASE WHEN i % 50 = 0 THEN ${REPORTS - 8} ELSE ${REPORTS} END) * ${STEP_S} + (i % 600)`)}, NULL, ${t(`${start}`)}, ${t(`${start}`)} FROM r;
    WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < ${RIGS - 1}),
         s(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM s WHERE k < ${REPORTS})
    INSERT INTO rig_reports (rig_id, received_at, serial, lan_ip, peer_address, version, branch, latitude, longitude)
    SELECT 'rig' || i, ${t(`${start} + k * ${STEP_S} + (i % 600)`)}, 'S-' || i, NULL, '10.144.0.1', ${version}, ${branch}, NULL, NULL
    FROM r, s WHERE ${keep} ORDER BY k, i;
    COMMIT;`);
  const n = await count();
  await new Promise<void>((resolve) => conn.close(() => resolve()));
  return n;
}

function rigd(args: string[]): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) =>
    execFile(RIGD, args, { env: { PATH: process.env.PATH, HOME: process.env.HOME, RIGD_DATA_DIR: dataDir }, maxBuffer: 256 * 1024 * 1024 }, (err, stdout) => {
      if (err) return reject(err);
      JSON.parse(stdout);
      resolve(performance.now() - t0);
    }),
  );
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (v: number) => `${Math.round(v)} ms`;

/** `runs` GETs of url by one curl (one connection, kept alive), in the namespace or on loopback: "p50 X ms (first Y ms)". */
async function curlTimes(net: Hosts | null, url: string, runs: number, headers: string[] = []): Promise<string> {
  const argv = ['curl', '-sS', ...headers.flatMap((h) => ['-H', h]), '-w', '%{http_code} %{time_total}\\n', ...Array.from({ length: runs }, () => [url, '-o', '/dev/null']).flat()];
  const { stdout } = net ? await net.exec('rigs', argv, { timeoutMs: 600_000 }) : await new Promise<{ stdout: string }>((resolve, reject) => execFile(argv[0]!, argv.slice(1), (err, out) => (err ? reject(err) : resolve({ stdout: out }))));
  const lines = stdout.trim().split('\n').map((l) => l.split(' '));
  const bad = lines.find(([code]) => code !== '200');
  if (bad || lines.length !== runs) throw new Error(`${url}: ${stdout}`);
  const xs = lines.map(([, s]) => Number(s) * 1000);
  return `p50 ${ms(median(xs.slice(Math.min(1, runs - 1))))} (first ${ms(xs[0]!)}, ${runs} runs)`;
}

const net = await createHosts([{ name: 'rigs', addr: '10.144.189.2', gw: GW }]);
let stop = async () => {};
try {
  const t0 = performance.now();
  const rows = await seed();
  await rigdCli(dataDir, ['user', 'add', 'bench', '--email', 'bench@example.com', '--password-stdin'], 'bench-password-1\n');
  console.log(`seeded ${RIGS} rigs, ${rows} reports (one per ${STEP_S / 60} min over 7 days, with holes) in ${ms(performance.now() - t0)} (before rigd serve starts; not measured)`);
  const served = await startRigd({ dataDir, logFile: path.join(work, 'rigd.log') });
  stop = async () => void (await served.stop());
  const pid = servePid(dataDir);
  process.stdout.write(describeRun(served));
  const local = `http://127.0.0.1:${served.port}`;
  const session = await fetch(`${local}/api/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'bench', password: 'bench-password-1' }) });
  if (session.status !== 200) throw new Error(`login: ${session.status} ${await session.text()}`);
  const { token } = (await session.json()) as { token: string };
  const api = [`host: ${GW}`, `authorization: ${token}`];
  const base = `http://${GW}:${served.port}`;
  console.log(`GET /api/v1/rigs/${SHOWN} (offline periods, 24 h and 7 d shares) from the namespace: ${await curlTimes(net, `${base}/api/v1/rigs/${SHOWN}`, HTTP_RUNS, api)}`);
  console.log(`GET /api/v1/rigs (online_since / offline_since of every rig) from the namespace: ${await curlTimes(net, `${base}/api/v1/rigs`, Math.min(HTTP_RUNS, 5), api)}`);
  console.log(`GET /rigs/${SHOWN} (the rig's page) from loopback: ${await curlTimes(null, `${local}/rigs/${SHOWN}`, HTTP_RUNS)}`);
  console.log(`whole process, rigd rigs show ${SHOWN} --json (beside serve): ${ms(await rigd(['rigs', 'show', SHOWN, '--json']))}`);
  console.log(`whole process, rigd fleet --json (beside serve): ${ms(await rigd(['fleet', '--json']))}`);
  console.log(`whole process, rigd rigs --json (beside serve): ${ms(await rigd(['rigs', '--json']))}`);
  console.log(`RSS of rigd serve (pid ${pid}) at the end: ${Math.round(rssKb(pid) / 1024)} MB; load average ${loads()}`);
} finally {
  await stop();
  await net.destroy();
  if (process.env.BENCH_KEEP) console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
