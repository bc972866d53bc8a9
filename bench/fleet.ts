// Availability and fleet summaries on a big history: 10,000 rigs with a week of reports (one every
// 45 min, with holes; ~2.2M rows), seeded inside SQLite in one transaction (a recursive CTE, no
// per-row round trips), then `rigd fleet --json`, `rigd rigs show ID --json` and `rigd rigs --json`
// timed as child processes (after npm run build) and the availability queries timed in process.
// Run by hand: npm run bench:fleet
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load.ts';
import { openDatabase } from '../src/db/index.ts';
import { DB_FILE } from '../src/db/file.ts';
import { openLiteReader } from '../src/db/reader.ts';
import { fleetStretches, rigAvailability } from '../src/services/rigs/availability.ts';
import { fleetSummary } from '../src/services/rigs/fleet.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RIGS = Number(process.env.BENCH_RIGS ?? 10_000);
const STEP_S = 45 * 60;
const REPORTS = Math.floor((7 * 86400) / STEP_S);
/** A rig with a hole in its history that stopped reporting 6 h ago. */
const SHOWN = `rig${Math.floor((RIGS * 0.425) / 50) * 50}`;

const dataDir = mkdtempSync(path.join(tmpdir(), 'rigd-bench-fleet-'));
const config = loadConfig({ env: {}, overrides: { data_dir: dataDir } }).config;

async function seed(): Promise<number> {
  const db = await openDatabase(dataDir);
  await db.close();
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
    execFile(path.join(ROOT, 'bin/rigd'), args, { env: { ...process.env, RIGD_DATA_DIR: dataDir }, maxBuffer: 256 * 1024 * 1024 }, (err, stdout) => {
      if (err) return reject(err);
      JSON.parse(stdout);
      resolve(performance.now() - t0);
    }),
  );
}

async function timed<T>(fn: () => Promise<T>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

const ms = (v: number) => `${Math.round(v)} ms`;
try {
  const t0 = performance.now();
  const rows = await seed();
  console.log(`seeded ${RIGS} rigs, ${rows} reports (one per ${STEP_S / 60} min over 7 days, with holes) in ${ms(performance.now() - t0)}`);
  const reader = await openLiteReader(dataDir);
  if (!reader) throw new Error('database not migrated');
  const now = new Date();
  console.log(`availability of one rig (offline periods, 24 h and 7 d shares): ${ms(await timed(() => rigAvailability(reader, config, SHOWN, now)))}`);
  console.log(`online_since / offline_since for every rig (one query): ${ms(await timed(() => fleetStretches(reader, config, now)))}`);
  console.log(`fleet summary in process: ${ms(await timed(() => fleetSummary(reader, config, now)))}`);
  await reader.close();
  console.log(`rigd rigs show ${SHOWN} --json: ${ms(await rigd(['rigs', 'show', SHOWN, '--json']))}`);
  console.log(`rigd fleet --json: ${ms(await rigd(['fleet', '--json']))}`);
  console.log(`rigd rigs --json: ${ms(await rigd(['rigs', '--json']))}`);
} finally {
  if (process.env.BENCH_KEEP) console.log(`kept ${dataDir}`);
  else rmSync(dataDir, { recursive: true, force: true });
}
