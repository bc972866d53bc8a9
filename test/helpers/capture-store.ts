// Stands in for the capture import (src/ingest/import*.ts) until it lands: makes a real capture file
// with given rows, ingests it through the app (so its state is the service's), then writes its rows
// into the capture store exactly as src/db/capture-store/layout.ts describes and records the
// capture's tables summary (captures.tables). Once the import is merged, tests call it instead.
//
//   const id = await seedCapture(app, dir, 'rig1/a.sqlite', [{ name: 'frames', columns: [{ name: 'ts', type: 'TEXT' }], rows: [['2026-11-23T08:00:00Z']] }]);
import path from 'node:path';
import sqlite3 from 'sqlite3';
import { CAPTURE_ID_COLUMN, captureStorePath, quoteIdent, type CaptureTableSummary, type StoreColumn } from '../../src/db/capture-store/layout.ts';
import type { App } from '../../src/services/app.ts';
import { putFile, settled } from './captures.ts';

export type SeedValue = number | string | Buffer | null;

export interface SeedTable {
  name: string;
  columns: StoreColumn[];
  rows: SeedValue[][];
}

function open(file: string): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, (err) => (err ? reject(err) : resolve(db)));
  });
}
function exec(db: sqlite3.Database, sql: string, params: unknown[] = []): Promise<void> {
  return new Promise((resolve, reject) => db.run(sql, params, (err) => (err ? reject(err) : resolve())));
}
function all<T>(db: sqlite3.Database, sql: string, params: unknown[] = []): Promise<T[]> {
  return new Promise((resolve, reject) => db.all(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
}
function close(db: sqlite3.Database): Promise<void> {
  return new Promise((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())));
}

/** A capture file holding exactly these tables and rows. */
export async function writeCaptureFile(file: string, tables: SeedTable[]): Promise<void> {
  const db = await open(file);
  for (const t of tables) {
    await exec(db, `CREATE TABLE ${quoteIdent(t.name)} (${t.columns.map((c) => `${quoteIdent(c.name)} ${c.type}`.trim()).join(', ')})`);
    await exec(db, 'BEGIN');
    for (const r of t.rows) await exec(db, `INSERT INTO ${quoteIdent(t.name)} VALUES (${r.map(() => '?').join(', ')})`, r);
    await exec(db, 'COMMIT');
  }
  await close(db);
}

/** The first column whose name or declared type looks like a time; its span as ISO 8601 UTC. */
function timeSpan(t: SeedTable): Pick<CaptureTableSummary, 'time_column' | 'first' | 'last'> {
  const i = t.columns.findIndex((c) => /(^ts$|time|_at$|date)/i.test(c.name) || /DATE|TIME/i.test(c.type));
  if (i < 0) return { time_column: null, first: null, last: null };
  const times = t.rows.map((r) => r[i]).filter((v): v is string | number => typeof v === 'string' || typeof v === 'number').map((v) => new Date(v).getTime()).filter(Number.isFinite).sort((a, b) => a - b);
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  return { time_column: t.columns[i]!.name, first: iso(times[0]), last: iso(times[times.length - 1]) };
}

/** Adds the capture's rows to the store as the layout says: one table per name, capture_id, the union of columns. */
export async function importIntoStore(dataDir: string, captureId: number, tables: SeedTable[]): Promise<CaptureTableSummary[]> {
  const db = await open(captureStorePath(dataDir));
  await exec(db, 'PRAGMA journal_mode=WAL');
  for (const t of tables) {
    const q = quoteIdent(t.name);
    await exec(db, `CREATE TABLE IF NOT EXISTS ${q} (${quoteIdent(CAPTURE_ID_COLUMN)} INTEGER NOT NULL)`);
    await exec(db, `CREATE INDEX IF NOT EXISTS ${quoteIdent(`${t.name}_capture_id`)} ON ${q} (${quoteIdent(CAPTURE_ID_COLUMN)})`);
    const have = new Set((await all<{ name: string }>(db, 'SELECT name FROM pragma_table_info(?)', [t.name])).map((c) => c.name.toLowerCase()));
    for (const c of t.columns) if (!have.has(c.name.toLowerCase())) await exec(db, `ALTER TABLE ${q} ADD COLUMN ${quoteIdent(c.name)} ${c.type}`.trim());
    const cols = [CAPTURE_ID_COLUMN, ...t.columns.map((c) => c.name)].map(quoteIdent).join(', ');
    await exec(db, 'BEGIN');
    for (const r of t.rows) await exec(db, `INSERT INTO ${q} (${cols}) VALUES (${['?', ...r.map(() => '?')].join(', ')})`, [captureId, ...r]);
    await exec(db, 'COMMIT');
  }
  await close(db);
  return tables.map((t) => ({ name: t.name, columns: t.columns, rows: t.rows.length, ...timeSpan(t) }));
}

/**
 * A capture of these tables, ingested by the app (app.start() must have run) and imported into the
 * store, its tables summary recorded. Returns its id.
 */
export async function seedCapture(app: App, dir: string, key: string, tables: SeedTable[]): Promise<number> {
  const file = path.join(dir, key.replaceAll('/', '_'));
  await writeCaptureFile(file, tables);
  await putFile(app, key, file);
  const { capture } = await app.captures.queueObject({ key, url: app.storage.objectUrl(key) });
  const done = await settled(app, capture.id);
  if (done.state !== 'ingested') throw new Error(`capture ${key} ${done.state}: ${done.last_error}`);
  const summary = await importIntoStore(app.config.data_dir, capture.id, tables);
  await app.db.models.Capture.update({ tables: JSON.stringify(summary) }, { where: { id: capture.id } });
  return capture.id;
}
