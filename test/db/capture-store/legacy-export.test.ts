// Exports and the capture_rows counts over a capture store of the earlier layout (typed columns, one
// table per name, no catalog): before any writer opened it (no catalog yet: read by table name), and
// after (its tables registered as legacy ones in the catalog, one capture imported again into the new
// layout while another stays in the legacy table).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import sqlite3 from 'sqlite3';
import test from 'tape';
import { captureStorePath, type RowBatch } from '../../../src/db/capture-store/index.ts';
import { openTablePages, type PageCell, type PageOptions } from '../../../src/db/capture-store/pages.ts';
import { captureRowCounts, rowsOf } from '../../../src/db/capture-store/row-counts.ts';
import { openTestStore, storeQuery } from '../../helpers/capture-store.ts';
import { databaseUrlFor, onPostgres } from '../../helpers/dialect.ts';
import { tmpDir } from '../../helpers/tmp.ts';

const dataDir = path.join(tmpDir('rigd-legacy-export-'), 'data');
const url = databaseUrlFor(dataDir);
const PAGING: PageOptions = { pageRows: 128, pageBytes: 65_536, largeBytes: 16_384 };

async function* batches(...list: RowBatch[]): AsyncGenerator<RowBatch> {
  for (const b of list) yield b;
}

async function makeLegacyStore(): Promise<void> {
  const rows = "INSERT INTO frames VALUES (1, 10, 'a', 1.0), (1, 11, 'b', 0.5), (2, 20, 'c', NULL)";
  if (onPostgres) {
    await storeQuery(dataDir, 'CREATE SCHEMA rigd_captures');
    await storeQuery(dataDir, 'CREATE TABLE rigd_captures."frames" ("capture_id" bigint NOT NULL, "id" bigint, "label" text, "x" double precision)');
    await storeQuery(dataDir, rows.replace('INTO frames', 'INTO rigd_captures.frames'));
    return;
  }
  mkdirSync(dataDir, { recursive: true });
  const db = await new Promise<sqlite3.Database>((resolve, reject) => {
    const d: sqlite3.Database = new sqlite3.Database(captureStorePath(dataDir), (err) => (err ? reject(err) : resolve(d)));
  });
  const ddl = ['CREATE TABLE "frames" ("capture_id" INTEGER NOT NULL, "id" INTEGER, "label" TEXT, "x" REAL)', 'CREATE INDEX "frames.capture_id" ON "frames" ("capture_id")'];
  await new Promise<void>((resolve, reject) => db.exec([...ddl, rows].join(';'), (err) => (err ? reject(err) : resolve())));
  await new Promise<void>((resolve) => db.close(() => resolve()));
}

/** Every row of one capture's table through the export pages, as text (reals keep their point). */
async function exported(captureId: number): Promise<string[][]> {
  const pages = (await openTablePages(dataDir, url, 'frames', ['id', 'label', 'x'], captureId, PAGING))!;
  const out: string[][] = [];
  try {
    for (let page = await pages.next(); page; page = await pages.next()) {
      out.push(...page.map((row: PageCell[]) => row.map((c) => (c === null ? 'NULL' : typeof c === 'object' && 'text' in c ? c.text : String(c)))));
    }
  } finally {
    await pages.close();
  }
  return out;
}

test('a store of the earlier layout, never opened by a writer: exported and counted by table name', async (t) => {
  await makeLegacyStore();
  t.deepEqual(await exported(1), [['10', 'a', '1.0'], ['11', 'b', '0.5']], "capture 1's rows, the real 1 as 1.0");
  t.deepEqual(await exported(2), [['20', 'c', 'NULL']], "capture 2's rows");
  const counts = await captureRowCounts(dataDir, url, [1, 2, 3]);
  t.deepEqual([rowsOf(counts, 1, 'frames'), rowsOf(counts, 2, 'FRAMES'), rowsOf(counts, 3, 'frames')], [2, 1, 0], 'rows per capture (any case of the name); a capture it lacks has 0');
});

test('the same store once registered: a capture imported again is read from its new table, the other from the legacy one', async (t) => {
  const store = await openTestStore(dataDir);
  const cols = [{ name: 'id', type: 'INTEGER' }, { name: 'label', type: 'TEXT' }, { name: 'x', type: 'REAL' }];
  await store.replace(1, [{ name: 'frames', columns: cols }], batches({ table: 'frames', rows: [[12, '007', 2]], bytes: 1, classes: ['itr'] }));
  await store.close();
  const [one] = await storeQuery<{ physical: string }>(dataDir, 'SELECT physical FROM rigd_capture_tables WHERE capture_id = 1');
  t.notEqual(one!.physical, 'frames', 'capture 1 now in a table of the new layout');
  t.deepEqual(await exported(1), [['12', '007', '2.0']], 'capture 1 from its new table: text 007, the real 2 as 2.0');
  t.deepEqual(await exported(2), [['20', 'c', 'NULL']], 'capture 2 still from the legacy table');
  const counts = await captureRowCounts(dataDir, url, [1, 2]);
  t.deepEqual([rowsOf(counts, 1, 'frames'), rowsOf(counts, 2, 'frames')], [1, 1], 'counted through the catalog: 1 row each');
});
