// The capture the import benches build: about `mb` MB of numbers, text, NULLs and blobs in three tables.
import { statSync } from 'node:fs';
import sqlite3 from 'sqlite3';

const MB = 1_000_000;

function exec(db: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
}

const rows = (n: number, select: string, table: string) =>
  `WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${n}) INSERT INTO ${table} SELECT ${select} FROM s`;

/** The formulas below come out at about 83% of the size asked for: ask for mb * SCALE. */
export const SCALE = 1.2;

/** The capture's tables (for a copy by the sqlite3 CLI). */
export const CAPTURE_TABLES = ['readings', 'events', 'frames'];

/** A capture of about `mb` MB: ~40% readings (numbers, text, NULLs), ~15% events (JSON-ish text), ~45% frames (blobs). */
export async function makeCapture(file: string, mb: number): Promise<number> {
  const db: sqlite3.Database = await new Promise((resolve, reject) => {
    const d: sqlite3.Database = new sqlite3.Database(file, (err) => (err ? reject(err) : resolve(d)));
  });
  const readings = Math.round((mb * MB * 0.4) / 60);
  const events = Math.round((mb * MB * 0.15) / 220);
  const frames = Math.round((mb * MB * 0.45) / 16_500);
  await exec(db, 'PRAGMA page_size = 4096; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN');
  await exec(db, 'CREATE TABLE readings (id INTEGER PRIMARY KEY, sensor TEXT, value REAL, quality INTEGER, taken_at INTEGER)');
  await exec(db, rows(readings, "n, 'sensor-' || (n % 64), n * 0.25, CASE WHEN n % 7 = 0 THEN NULL ELSE n % 100 END, 1700000000 + n", 'readings'));
  await exec(db, 'CREATE TABLE events (id INTEGER PRIMARY KEY, kind TEXT, detail TEXT, at DATETIME)');
  await exec(db, rows(events, "n, 'kind' || (n % 12), '{\"seq\":' || n || ',\"msg\":\"' || hex(randomblob(80)) || '\"}', datetime(1700000000 + n, 'unixepoch')", 'events'));
  await exec(db, 'CREATE TABLE frames (id INTEGER PRIMARY KEY, camera INTEGER, data BLOB, note)');
  await exec(db, rows(frames, "n, n % 4, randomblob(16000 + (n % 1000)), CASE WHEN n % 2 = 0 THEN NULL ELSE x'cafe' END", 'frames'));
  await exec(db, 'COMMIT');
  await new Promise<void>((resolve) => db.close(() => resolve()));
  return statSync(file).size;
}

