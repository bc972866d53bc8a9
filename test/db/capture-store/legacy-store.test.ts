// A capture store of the earlier layout (typed columns, no catalog) is kept: the first writer to open
// it registers its tables as legacy ones, its captures stay readable through the reader, a new
// capture of the same table name never goes into a legacy table, and a capture imported again
// leaves it for the new layout (its old rows removed in the same transaction).
import path from 'node:path';
import test from 'tape';
import type { RowBatch } from '../../../src/db/capture-store/index.ts';
import { openTestReader, openTestStore, storeQuery } from '../../helpers/capture-store.ts';
import { onPostgres } from '../../helpers/dialect.ts';
import { tmpDir } from '../../helpers/tmp.ts';
import sqlite3 from 'sqlite3';
import { mkdirSync } from 'node:fs';
import { captureStorePath } from '../../../src/db/capture-store/index.ts';

const dataDir = path.join(tmpDir('rigd-legacy-store-'), 'data');

async function* batches(...list: RowBatch[]): AsyncGenerator<RowBatch> {
  for (const b of list) yield b;
}

async function makeLegacyStore(): Promise<void> {
  const ddl = ['CREATE TABLE "frames" ("capture_id" INTEGER NOT NULL, "id" INTEGER, "label" TEXT)', `CREATE INDEX "frames.capture_id" ON "frames" ("capture_id")`];
  const rows = "INSERT INTO frames VALUES (1, 10, 'a'), (1, 11, 'b'), (2, 20, 'c')";
  if (onPostgres) {
    await storeQuery(dataDir, 'CREATE SCHEMA rigd_captures');
    await storeQuery(dataDir, 'CREATE TABLE rigd_captures."frames" ("capture_id" bigint NOT NULL, "id" bigint, "label" text)');
    await storeQuery(dataDir, rows.replace('INTO frames', 'INTO rigd_captures.frames'));
    return;
  }
  mkdirSync(dataDir, { recursive: true });
  const db = await new Promise<sqlite3.Database>((resolve, reject) => {
    const d: sqlite3.Database = new sqlite3.Database(captureStorePath(dataDir), (err) => (err ? reject(err) : resolve(d)));
  });
  await new Promise<void>((resolve, reject) => db.exec([...ddl, rows].join(';'), (err) => (err ? reject(err) : resolve())));
  await new Promise<void>((resolve) => db.close(() => resolve()));
}

test('an earlier store: registered as legacy, still readable, left by a capture imported again', async (t) => {
  await makeLegacyStore();
  const store = await openTestStore(dataDir);
  const catalog = await storeQuery<{ capture_id: number; name: string; physical: string; rows: number }>(dataDir, 'SELECT capture_id, name, physical, rows FROM rigd_capture_tables ORDER BY capture_id');
  t.deepEqual(catalog.map((r) => [Number(r.capture_id), r.name, r.physical, Number(r.rows)]), [[1, 'frames', 'frames', 2], [2, 'frames', 'frames', 1]], 'its captures registered in the catalog');
  const reader = (await openTestReader(dataDir))!;
  const got = [];
  for await (const r of reader.rows('frames', ['id', 'label'], 1)) got.push(r);
  t.deepEqual(got, [[10, 'a'], [11, 'b']], "capture 1's rows read as before");
  await reader.close();

  await store.replace(3, [{ name: 'frames', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'label', type: 'TEXT' }] }], batches({ table: 'frames', rows: [[30, '007']], bytes: 1 }));
  const three = await storeQuery<{ physical: string }>(dataDir, 'SELECT physical FROM rigd_capture_tables WHERE capture_id = 3');
  t.notEqual(three[0]!.physical, 'frames', `a new capture goes to a table of the new layout (${three[0]!.physical}), not into the typed legacy table`);
  await store.replace(1, [{ name: 'frames', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'label', type: 'TEXT' }] }], batches({ table: 'frames', rows: [[12, 'z']], bytes: 1 }));
  const left = await storeQuery<{ n: number }>(dataDir, 'SELECT count(*) AS n FROM frames WHERE capture_id = 1');
  t.equal(Number(left[0]!.n), 0, 'capture 1 imported again: its rows left the legacy table');
  const two = await storeQuery<{ n: number }>(dataDir, 'SELECT count(*) AS n FROM frames WHERE capture_id = 2');
  t.equal(Number(two[0]!.n), 1, 'capture 2 untouched');
  const reader2 = (await openTestReader(dataDir))!;
  const again = [];
  for await (const r of reader2.rows('frames', ['id', 'label'], 1)) again.push(r);
  t.deepEqual(again, [[12, 'z']], 'capture 1 read from its new table');
  await reader2.close();
  await store.close();
});
