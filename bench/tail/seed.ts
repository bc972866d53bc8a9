// Bulk rigs and history for the benches, written inside SQLite (recursive CTEs, one transaction, no
// per-row round trips) through a connection of its own, before rigd serve starts or while it is idle.
import { statSync } from 'node:fs';
import path from 'node:path';
import sqlite3 from 'sqlite3';
import { DB_FILE } from '../../src/db/file.ts';

export async function withConnection<T>(dataDir: string, fn: (exec: (sql: string) => Promise<void>) => Promise<T>): Promise<T> {
  const conn = new sqlite3.Database(path.join(dataDir, DB_FILE));
  conn.configure('busyTimeout', 30_000);
  const exec = (sql: string) => new Promise<void>((resolve, reject) => conn.exec(sql, (err) => (err ? reject(err) : resolve())));
  try {
    return await fn(exec);
  } finally {
    await new Promise<void>((resolve) => conn.close(() => resolve()));
  }
}

const t = (expr: string) => `strftime('%Y-%m-%d %H:%M:%f', ${expr}, 'unixepoch') || ' +00:00'`;

/** `rows` history rows of rigs rig0..rig{rigs-1}, all `ageDays` to `ageDays` + 1 days old. */
export function seedOldReports(dataDir: string, rows: number, rigs: number, ageDays: number): Promise<void> {
  const start = Math.floor(Date.now() / 1000) - (ageDays + 1) * 86_400;
  const step = 86_400 / rows;
  return withConnection(dataDir, (exec) =>
    exec(`BEGIN;
      WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${rows - 1})
      INSERT INTO rig_reports (rig_id, received_at, serial, lan_ip, peer_address, version, branch, latitude, longitude)
      SELECT 'rig' || (i % ${rigs}), ${t(`${start} + i * ${step}`)}, 'OLD', NULL, '10.144.0.1', '3.0.0', 'main', NULL, NULL FROM n;
      COMMIT;`),
  );
}

/**
 * Rigs rig{from}..rig{to-1}, each with a report every 45 min over `days` days (the fleet bench's
 * density), its last one a few minutes ago: 10,000 rigs, a week: ~2.2 M rows.
 */
export function seedFleet(dataDir: string, from: number, to: number, days: number): Promise<void> {
  const stepS = 45 * 60;
  const reports = Math.floor((days * 86_400) / stepS);
  const start = Math.floor(Date.now() / 1000) - reports * stepS - 600;
  return withConnection(dataDir, (exec) =>
    exec(`BEGIN;
      WITH RECURSIVE r(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM r WHERE i < ${to - 1})
      INSERT INTO rigs (id, serial, lan_ip, vpn_address, version, branch, latitude, longitude, last_seen_at, current_project, created_at, updated_at)
      SELECT 'rig' || i, 'S-' || i, '192.168.1.' || (i % 250), '10.144.' || (i / 250 % 250) || '.' || (i % 250), '3.1.0', 'main', 47.3 + (i % 100) * 0.001, 8.5, ${t(`${start} + ${reports * stepS} + (i % 600)`)}, NULL, ${t(`${start}`)}, ${t(`${start}`)} FROM r;
      WITH RECURSIVE r(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM r WHERE i < ${to - 1}),
           s(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM s WHERE k < ${reports})
      INSERT INTO rig_reports (rig_id, received_at, serial, lan_ip, peer_address, version, branch, latitude, longitude)
      SELECT 'rig' || i, ${t(`${start} + k * ${stepS} + (i % 600)`)}, 'S-' || i, NULL, '10.144.0.1', '3.1.0', 'main', NULL, NULL FROM r, s ORDER BY k, i;
      COMMIT;`),
  );
}

/** A capture of about `mb` MB (a readings table and 4 KB random blobs), as bench/ingest.ts makes them. */
export async function makeCaptureFile(file: string, mb: number): Promise<number> {
  const db = new sqlite3.Database(file);
  const exec = (sql: string) => new Promise<void>((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
  const blobs = Math.max(1, Math.round((mb * 1e6) / 4150));
  await exec('PRAGMA page_size = 4096; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN');
  await exec('CREATE TABLE readings (id INTEGER PRIMARY KEY, sensor TEXT, value REAL, taken_at INTEGER)');
  await exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) INSERT INTO readings SELECT i, 's' || (i % 8), i * 0.5, 1700000000 + i FROM n");
  await exec('CREATE TABLE frames (id INTEGER PRIMARY KEY, data BLOB)');
  await exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${blobs}) INSERT INTO frames SELECT i, randomblob(4000) FROM n`);
  await exec('COMMIT');
  await new Promise<void>((resolve) => db.close(() => resolve()));
  return statSync(file).size;
}
