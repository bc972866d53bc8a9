// The capture store on PostgreSQL (schema rigd_captures): the writer's transaction, type mapping,
// exact integers past 2^53, blobs in columns without a type, one table per name whatever the case,
// wide tables under the bind-parameter limit, and the reader (rows in order, a read-only query).
import path from 'node:path';
import test from 'tape';
import type { RowBatch, StoreTable } from '../../../src/db/capture-store/index.ts';
import { MAX_PARAMETERS, pgRowsPerStatement } from '../../../src/db/capture-store/postgres-writer.ts';
import { StoreQueryError } from '../../../src/db/capture-store/store-reader.ts';
import { countRows, openTestReader, openTestStore, storeQuery } from '../../helpers/capture-store.ts';
import { databaseUrlFor, postgresOnly } from '../../helpers/dialect.ts';
import { tmpDir } from '../../helpers/tmp.ts';

const dataDir = path.join(tmpDir('rigd-pg-store-'), 'data');

async function* batches(...list: RowBatch[]): AsyncGenerator<RowBatch> {
  for (const b of list) yield b;
}

const frames: StoreTable = {
  name: 'Frames',
  columns: [
    { name: 'id', type: 'INTEGER' },
    { name: 'data', type: 'BLOB' },
    { name: 'v', type: 'NUMERIC(10,2)' },
    { name: 'r', type: 'REAL' },
    { name: 'label', type: 'VARCHAR(20)' },
    { name: 'any', type: '' },
  ],
};

test('rows per INSERT stay under the bind-parameter limit', (t) => {
  t.equal(pgRowsPerStatement(2), 500, 'narrow tables: 500 rows per statement');
  t.ok(pgRowsPerStatement(1999) * 2000 <= MAX_PARAMETERS, 'a 1999-column table stays under 65535 parameters');
  t.end();
});

test('replace: types from the affinities, exact big integers, blobs kept as blobs', async (t) => {
  if (postgresOnly(t, 'the PostgreSQL store schema')) return;
  const store = await openTestStore(dataDir);
  const big = '9007199254740993';
  const res = await store.replace(
    1,
    [frames],
    batches({ table: 'Frames', rows: [[1, Buffer.from([0, 1, 2]), 1.5, 0.25, 'a', 'text'], [big, null, '7', 2, null, 42], [3, null, null, null, 'c', Buffer.from('hi')]], bytes: 10 }),
  );
  t.deepEqual([...res.rows], [['Frames', 3]], 'rows per table');
  const types = await storeQuery<{ column_name: string; data_type: string }>(
    dataDir,
    "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'rigd_captures' AND table_name = 'Frames' ORDER BY ordinal_position",
  );
  t.deepEqual(
    types.map((c) => `${c.column_name} ${c.data_type}`),
    ['capture_id bigint', 'id bigint', 'data jsonb', 'v jsonb', 'r double precision', 'label text', 'any jsonb'],
    'INTEGER bigint, REAL double precision, TEXT text, NUMERIC, no type or BLOB jsonb',
  );
  const reader = (await openTestReader(dataDir))!;
  const rows = [];
  for await (const r of reader.rows('frames', ['id', 'data', 'v', 'r', 'label', 'any'], 1)) rows.push(r);
  t.deepEqual(
    rows,
    [
      [1, Buffer.from([0, 1, 2]), 1.5, 0.25, 'a', 'text'],
      [big, null, 7, 2, null, 42],
      [3, null, null, null, 'c', Buffer.from('hi')],
    ],
    'read back in insertion order: blobs as blobs, an integer past 2^53 as its exact digits',
  );
  t.deepEqual(await reader.columns('FRAMES'), ['capture_id', 'id', 'data', 'v', 'r', 'label', 'any'], 'columns found whatever the case');
  await reader.close();
  await store.close();
});

test('one table per name whatever the case; new columns added; a replace removes the old rows', async (t) => {
  if (postgresOnly(t, 'the PostgreSQL store schema')) return;
  const store = await openTestStore(dataDir);
  const wider: StoreTable = { name: 'FRAMES', columns: [{ name: 'ID', type: 'INTEGER' }, { name: 'extra', type: 'TEXT' }] };
  const res = await store.replace(1, [wider], batches({ table: 'FRAMES', rows: [[10, 'x']], bytes: 1 }));
  t.equal(res.replaced, 3, 'the 3 earlier rows of capture 1 replaced');
  const tables = await storeQuery<{ table_name: string }>(dataDir, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'rigd_captures'");
  t.deepEqual(tables.map((x) => x.table_name), ['Frames'], 'one table, the first spelling');
  t.deepEqual(await storeQuery(dataDir, 'SELECT id, extra FROM "Frames" WHERE capture_id = 1'), [{ id: 10, extra: 'x' }], 'the new rows, into the existing id column');
  await store.close();
});

test('a failing batch source rolls everything back; a bad value names its column', async (t) => {
  if (postgresOnly(t, 'the PostgreSQL store schema')) return;
  const store = await openTestStore(dataDir);
  async function* failing(): AsyncGenerator<RowBatch> {
    yield { table: 'FRAMES', rows: [[11, 'y']], bytes: 1 };
    yield { table: 'brand_new', rows: [[1]], bytes: 1 };
    throw new Error('the source broke');
  }
  const err = await store.replace(1, [{ name: 'FRAMES', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'more', type: 'TEXT' }] }, { name: 'brand_new', columns: [{ name: 'a', type: '' }] }], failing()).catch((e: Error) => e);
  t.equal((err as Error).message, 'the source broke', 'the source error comes through');
  t.equal(await countRows(dataDir, 'Frames', 1), 1, "capture 1's rows as before");
  const tables = await storeQuery<{ table_name: string }>(dataDir, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'rigd_captures'");
  t.deepEqual(tables.map((x) => x.table_name), ['Frames'], 'no new table');
  const cols = await storeQuery<{ column_name: string }>(dataDir, "SELECT column_name FROM information_schema.columns WHERE table_schema = 'rigd_captures' AND column_name = 'more'");
  t.equal(cols.length, 0, 'no new column');
  const bad = await store.replace(1, [{ name: 'Frames', columns: [{ name: 'id', type: 'INTEGER' }] }], batches({ table: 'Frames', rows: [[Buffer.from('x')]], bytes: 1 })).catch((e: Error) => e);
  t.match((bad as Error).message, /blob in column id of Frames/, `a blob in a typed column: ${(bad as Error).message}`);
  t.equal(await countRows(dataDir, 'Frames', 1), 1, 'still as before');
  await store.close();
});

test('a wide table lands whole; two writers at once take turns', async (t) => {
  if (postgresOnly(t, 'the PostgreSQL store schema')) return;
  const columns = Array.from({ length: 300 }, (_, i) => ({ name: `c${i}`, type: 'INTEGER' }));
  const rows = Array.from({ length: 1000 }, (_, r) => columns.map((_, c) => r * 1000 + c));
  const a = await openTestStore(dataDir);
  const b = await openTestStore(dataDir);
  await Promise.all([
    a.replace(5, [{ name: 'wide', columns }], batches({ table: 'wide', rows: rows.slice(0, 777), bytes: 1 }, { table: 'wide', rows: rows.slice(777), bytes: 1 })),
    b.replace(6, [{ name: 'wide', columns }], batches({ table: 'wide', rows, bytes: 1 })),
  ]);
  await Promise.all([a.close(), b.close()]);
  const [r] = await storeQuery<{ n: number; s: number }>(dataDir, 'SELECT count(*) AS n, sum(c299) AS s FROM wide WHERE capture_id = 5');
  t.deepEqual([r!.n, Number(r!.s)], [1000, rows.reduce((s, x) => s + x[299]!, 0)], 'all 1000 rows of 300 columns');
  t.equal(await countRows(dataDir, 'wide', 6), 1000, 'and the other writer\'s');
});

test('the reader\'s query is read-only: writes and DDL are refused by the server, the store unchanged', async (t) => {
  if (postgresOnly(t, 'the PostgreSQL store schema')) return;
  const reader = (await openTestReader(dataDir))!;
  const ok = await reader.query('SELECT id FROM "Frames" WHERE capture_id = 1', { limit: 10, timeoutMs: 5000 });
  t.deepEqual(ok, { rows: [{ id: 10 }], truncated: false }, 'the store schema is the search path (a name with capitals is quoted, as PostgreSQL wants)');
  for (const sql of ['INSERT INTO "Frames" (capture_id) VALUES (99)', 'CREATE TABLE x (a int)', 'DELETE FROM "Frames"', 'DROP TABLE wide']) {
    const err = await reader.query(sql, { limit: 10, timeoutMs: 5000 }).catch((e: unknown) => e);
    t.ok(err instanceof StoreQueryError && err.reason === 'read_only', `${sql}: refused (${(err as Error).message})`);
  }
  const slow = await reader.query('SELECT pg_sleep(5)', { limit: 10, timeoutMs: 200 }).catch((e: unknown) => e);
  t.ok(slow instanceof StoreQueryError && slow.reason === 'timeout', 'stopped by statement_timeout');
  const many = await reader.query('SELECT generate_series(1, 50) AS n', { limit: 10, timeoutMs: 5000 });
  t.deepEqual([many.rows.length, many.truncated], [10, true], 'at most limit rows, and says there were more');
  await reader.close();
  t.equal(await countRows(dataDir, 'Frames', 1), 1, 'the store unchanged');
});

test("doctor's capture_store check: the schema's table count and size; a database without it is fine", async (t) => {
  if (postgresOnly(t, 'the PostgreSQL store schema')) return;
  const { checkPgCaptureStore } = await import('../../../src/services/doctor/capture-store-postgres.ts');
  const found = await checkPgCaptureStore(databaseUrlFor(dataDir));
  t.equal(found.status, 'ok', 'ok');
  t.match(found.message, /^schema rigd_captures of postgres:\/\/\S+ opens: 2 capture tables, \d+\.\d MB$/, found.message);
  const none = await checkPgCaptureStore(databaseUrlFor(dataDir), 'rigd_no_such_schema');
  t.deepEqual([none.status, /does not exist yet/.test(none.message)], ['ok', true], none.message);
});
