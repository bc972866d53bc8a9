// A capture with given rows, ingested through the app's real pipeline (fetch -> inspect -> import ->
// record), so its rows are in the capture store and its tables summary on the capture.
//
//   const id = await seedCapture(app, dir, 'rig1/a.sqlite', [{ name: 'frames', columns: [{ name: 'ts', type: 'TEXT' }], rows: [['2026-11-23T08:00:00Z']] }]);
import path from 'node:path';
import sqlite3 from 'sqlite3';
import { quoteIdent, type StoreColumn } from '../../src/db/capture-store/layout.ts';
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

/** A capture of these tables, ingested and imported by the app (app.start() must have run). Returns its id. */
export async function seedCapture(app: App, dir: string, key: string, tables: SeedTable[]): Promise<number> {
  const file = path.join(dir, key.replaceAll('/', '_'));
  await writeCaptureFile(file, tables);
  await putFile(app, key, file);
  const { capture } = await app.captures.queueObject({ key, url: app.storage.objectUrl(key) });
  const done = await settled(app, capture.id);
  if (done.state !== 'ingested') throw new Error(`capture ${key} ${done.state}: ${done.last_error}`);
  return capture.id;
}
