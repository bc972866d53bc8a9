// The SQLite capture store's writer on real files: the file is made on first use with its mode, tables
// and columns follow what is announced, replace is one transaction (a failing batch source changes
// nothing), wide tables stay within SQLite's variable limit, calls take turns, and the read-only
// opener cannot write.
import { statSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { sqliteOnly } from '../../helpers/dialect.ts';
import { captureStorePath, openCaptureStore, openCaptureStoreReadOnly, type RowBatch, type StoreTable } from '../../../src/db/capture-store/index.ts';
import { MAX_VARIABLES, rowsPerStatement } from '../../../src/db/capture-store/sqlite-writer.ts';
import { countRows, storeQuery } from '../../helpers/capture-store.ts';
import { captureIndexName } from '../../../src/db/capture-store/placement.ts';
import { tmpDir } from '../../helpers/tmp.ts';

const dataDir = path.join(tmpDir('rigd-capture-store-'), 'data');

async function* batches(...list: RowBatch[]): AsyncGenerator<RowBatch> {
  for (const b of list) yield b;
}

const t1: StoreTable = { name: 'frames', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'data', type: 'BLOB' }, { name: 'v', type: 'NUMERIC(10,2)' }] };

test('created on first use: mode 0640, WAL, a table per announced table with capture_id and its index', async (t) => {
  if (sqliteOnly(t, 'the SQLite store file')) return;
  const store = await openCaptureStore(dataDir);
  const st = statSync(captureStorePath(dataDir));
  t.equal(st.mode & 0o777, 0o640, 'the store file is 0640');
  const res = await store.replace(1, [t1, { name: 'empty', columns: [{ name: 'x', type: 'TEXT' }] }], batches({ table: 'frames', rows: [[1, Buffer.from([0, 1, 2]), 1.5], [2, null, '7']], bytes: 10 }));
  t.deepEqual([...res.rows], [['frames', 2], ['empty', 0]], 'rows per table');
  await store.close();
  const [mode] = await storeQuery<{ journal_mode: string }>(dataDir, 'PRAGMA journal_mode');
  t.equal(mode!.journal_mode, 'wal', 'WAL mode');
  const rows = await storeQuery(dataDir, 'SELECT capture_id, id, data, v, typeof(v) AS tv FROM frames ORDER BY id');
  t.deepEqual(
    rows,
    [
      { capture_id: 1, id: 1, data: Buffer.from([0, 1, 2]), v: 1.5, tv: 'real' },
      { capture_id: 1, id: 2, data: null, v: '7', tv: 'text' },
    ],
    'values as given: the store columns have no affinity (the text 7 declared NUMERIC stays text)',
  );
  const sql = await storeQuery<{ name: string; sql: string }>(dataDir, "SELECT name, sql FROM sqlite_schema WHERE tbl_name = 'empty' ORDER BY type DESC");
  t.deepEqual(
    sql.map((r) => r.sql),
    ['CREATE TABLE "empty" ("capture_id" INTEGER NOT NULL, "x")', `CREATE INDEX "${captureIndexName('empty')}" ON "empty" ("capture_id")`],
    'an announced table without rows is created too, its column without a type',
  );
  const catalog = await storeQuery(dataDir, 'SELECT name, physical, columns, rows FROM rigd_capture_tables WHERE capture_id = 1 ORDER BY name');
  t.deepEqual(
    catalog,
    [
      { name: 'empty', physical: 'empty', columns: JSON.stringify([{ name: 'x', type: 'TEXT', store: 'x' }]), rows: 0 },
      { name: 'frames', physical: 'frames', columns: JSON.stringify(t1.columns.map((c) => ({ ...c, store: c.name }))), rows: 2 },
    ],
    'the catalog records the declared types and where each table and column is',
  );
});

test('a batch source that fails rolls everything back: rows, new tables, new columns', async (t) => {
  if (sqliteOnly(t, 'the SQLite store file')) return;
  const store = await openCaptureStore(dataDir);
  async function* failing(): AsyncGenerator<RowBatch> {
    yield { table: 'frames', rows: [[9, null, 1, 'new']], bytes: 1 };
    yield { table: 'brand_new', rows: [[1]], bytes: 1 };
    throw new Error('the source broke');
  }
  const wider: StoreTable = { ...t1, columns: [...t1.columns, { name: 'extra', type: 'TEXT' }] };
  const err = await store.replace(1, [wider, { name: 'brand_new', columns: [{ name: 'a', type: '' }] }], failing()).catch((e: Error) => e);
  t.equal((err as Error).message, 'the source broke', 'the source error comes through');
  t.equal(await countRows(dataDir, 'frames', 1), 2, "capture 1's rows as before");
  const tables = await storeQuery<{ name: string }>(dataDir, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'rigd\\_%' ESCAPE '\\' ORDER BY name");
  t.deepEqual(tables.map((x) => x.name), ['empty', 'frames'], 'no new table');
  const cols = await storeQuery<{ name: string }>(dataDir, "SELECT name FROM pragma_table_info('frames')");
  t.notOk(cols.some((c) => c.name === 'extra'), 'no new column');
  const bad = await store.replace(1, [t1], batches({ table: 'nope', rows: [[1, 2, 3]], bytes: 1 })).catch((e: Error) => e);
  t.match((bad as Error).message, /did not announce/, 'a batch for an unannounced table is an error');
  const short = await store.replace(1, [t1], batches({ table: 'frames', rows: [[1, 2]], bytes: 1 })).catch((e: Error) => e);
  t.match((short as Error).message, /has 2 values, not 3/, 'a short row is an error');
  t.equal(await countRows(dataDir, 'frames', 1), 2, 'still as before');
  await store.close();
});

test('a wide table: rows per INSERT stay within the variable limit; many rows land', async (t) => {
  if (sqliteOnly(t, 'the SQLite store file')) return;
  t.equal(rowsPerStatement(2), 500, 'narrow tables: 500 rows per statement');
  t.equal(rowsPerStatement(1999), 8, '1999 columns (a class and a value each) + capture_id: 8 rows');
  t.ok(rowsPerStatement(1999) * (2 * 1999 + 1) <= MAX_VARIABLES, 'within SQLITE_MAX_VARIABLE_NUMBER');
  const columns = Array.from({ length: 300 }, (_, i) => ({ name: `c${i}`, type: 'INTEGER' }));
  const rows = Array.from({ length: 1000 }, (_, r) => columns.map((_, c) => r * 1000 + c));
  const store = await openCaptureStore(dataDir);
  await store.replace(5, [{ name: 'wide', columns }], batches({ table: 'wide', rows: rows.slice(0, 777), bytes: 1 }, { table: 'wide', rows: rows.slice(777), bytes: 1 }));
  await store.close();
  // Wider than captures.max_shared_columns (256): a table of its own shape.
  const [where] = await storeQuery<{ physical: string }>(dataDir, "SELECT physical FROM rigd_capture_tables WHERE capture_id = 5 AND name = 'wide'");
  t.match(where!.physical, /^wide~[0-9a-f]{16}$/, `a table of its own shape (${where!.physical})`);
  const [r] = await storeQuery<{ n: number; s: number }>(dataDir, `SELECT count(*) AS n, sum(c299) AS s FROM "${where!.physical}" WHERE capture_id = 5`);
  t.deepEqual([r!.n, r!.s], [1000, rows.reduce((s, x) => s + x[299]!, 0)], 'all 1000 rows of 300 columns');
});

test('calls on one store take turns: the second waits for the first to commit', async (t) => {
  if (sqliteOnly(t, 'the SQLite store file')) return;
  const store = await openCaptureStore(dataDir);
  const events: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let holding!: () => void;
  const aHolds = new Promise<void>((r) => (holding = r));
  async function* slow(tag: string): AsyncGenerator<RowBatch> {
    events.push(`${tag} start`);
    yield { table: 'frames', rows: [[1, null, 1]], bytes: 1 };
    if (tag === 'a') {
      holding(); // a's first rows are written: it holds the write transaction
      await gate;
    }
    yield { table: 'frames', rows: [[2, null, 2]], bytes: 1 };
    events.push(`${tag} end`);
  }
  const a = store.replace(10, [t1], slow('a'));
  const b = store.replace(11, [t1], slow('b'));
  await aHolds;
  // b has had its chance to start: if the store let it, it would have by now.
  await new Promise((r) => setTimeout(r, 200));
  t.deepEqual(events, ['a start'], 'b has not started while a holds the write transaction');
  release();
  await Promise.all([a, b]);
  t.deepEqual(events, ['a start', 'a end', 'b start', 'b end'], 'one after the other');
  t.deepEqual([await countRows(dataDir, 'frames', 10), await countRows(dataDir, 'frames', 11)], [2, 2], 'both committed');
  await store.close();
});

test('the read-only opener cannot write', async (t) => {
  if (sqliteOnly(t, 'the SQLite store file')) return;
  const db = await openCaptureStoreReadOnly(captureStorePath(dataDir));
  const err = await new Promise<Error | null>((resolve) => db.run('DELETE FROM frames', (e) => resolve(e)));
  t.match(String(err?.message), /readonly|read-only|query_only/i, `refused (${err?.message})`);
  await new Promise<void>((resolve) => db.close(() => resolve()));
  t.equal(await countRows(dataDir, 'frames', 1), 2, 'nothing deleted');
});
