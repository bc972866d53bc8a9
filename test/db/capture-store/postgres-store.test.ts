// The capture store on PostgreSQL (schema rigd_captures): the writer's transaction, jsonb values that
// carry their class (integers past 2^53, reals, numeric-looking text, blobs), names compared exactly,
// wide tables in a table of their own shape, and the reader (rows in order, a read-only query).
import path from 'node:path';
import test from 'tape';
import type { RowBatch, StoreTable } from '../../../src/db/capture-store/index.ts';
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

test('replace: every capture column is jsonb carrying its value\'s class; exact big integers, reals, numeric-looking text, blobs', async (t) => {
  if (postgresOnly(t, 'the PostgreSQL store schema')) return;
  const store = await openTestStore(dataDir);
  const big = '9007199254740993';
  const res = await store.replace(
    1,
    [frames],
    batches({
      table: 'Frames',
      rows: [[1, Buffer.from([0, 1, 2]), 1.5, 0.25, 'a', 'text'], [big, null, '7', 2, null, 42], [3, null, '007', 1e21, 'c', Buffer.from('hi')]],
      classes: ['ibrrtt', 'intrni', 'intrtb'],
      bytes: 10,
    }),
  );
  t.deepEqual([...res.rows], [['Frames', 3]], 'rows per table');
  const types = await storeQuery<{ column_name: string; data_type: string }>(
    dataDir,
    "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'rigd_captures' AND table_name = 'Frames' ORDER BY ordinal_position",
  );
  t.deepEqual(
    types.map((c) => `${c.column_name} ${c.data_type}`),
    ['capture_id bigint', 'id jsonb', 'data jsonb', 'v jsonb', 'r jsonb', 'label jsonb', 'any jsonb'],
    'capture_id bigint, every capture column jsonb whatever its declared type',
  );
  const text = await storeQuery<{ id: string; v: string | null; r: string | null }>(dataDir, 'SELECT id::text AS id, v::text AS v, r::text AS r FROM "Frames" ORDER BY ctid');
  t.deepEqual(
    text.map((x) => [x.id, x.v, x.r]),
    [['1', '1.5', '0.25'], [big, '"7"', '2.0'], ['3', '"007"', '1000000000000000000000.0']],
    'integers without a point, reals with one (written in full), text as JSON strings',
  );
  const reader = (await openTestReader(dataDir))!;
  const rows = [];
  for await (const r of reader.rows('Frames', ['id', 'data', 'v', 'r', 'label', 'any'], 1)) rows.push(r);
  t.deepEqual(
    rows,
    [
      [1, Buffer.from([0, 1, 2]), 1.5, 0.25, 'a', 'text'],
      [big, null, '7', 2, null, 42],
      [3, null, '007', 1e21, 'c', Buffer.from('hi')],
    ],
    'read back in insertion order: blobs as blobs, text as text, an integer past 2^53 as its exact digits',
  );
  t.deepEqual(await reader.columns('Frames', 1), ['id', 'data', 'v', 'r', 'label', 'any'], "the capture's own columns, from the catalog");
  t.equal(await reader.columns('Frames', 99), null, 'none for a capture the store does not hold');
  await reader.close();
  await store.close();
});

test('names compared as PostgreSQL does (exact); new columns added to the shared table; a replace removes the old rows', async (t) => {
  if (postgresOnly(t, 'the PostgreSQL store schema')) return;
  const store = await openTestStore(dataDir);
  const wider: StoreTable = { name: 'Frames', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'extra', type: 'TEXT' }] };
  const res = await store.replace(1, [wider], batches({ table: 'Frames', rows: [[10, 'x']], bytes: 1 }));
  t.equal(res.replaced, 3, 'the 3 earlier rows of capture 1 replaced');
  await store.replace(2, [{ name: 'FRAMES', columns: [{ name: 'ID', type: 'INTEGER' }] }], batches({ table: 'FRAMES', rows: [[20]], bytes: 1 }));
  const tables = await storeQuery<{ table_name: string }>(dataDir, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'rigd_captures' AND table_name NOT LIKE 'rigd\\_%' ORDER BY 1");
  t.deepEqual(tables.map((x) => x.table_name), ['FRAMES', 'Frames'], 'FRAMES and Frames are two names on PostgreSQL');
  t.deepEqual(await storeQuery(dataDir, 'SELECT id, extra FROM "Frames" WHERE capture_id = 1'), [{ id: 10, extra: 'x' }], 'the new rows, into the existing id column');
  await store.close();
});

test('a failing batch source rolls everything back', async (t) => {
  if (postgresOnly(t, 'the PostgreSQL store schema')) return;
  const store = await openTestStore(dataDir);
  async function* failing(): AsyncGenerator<RowBatch> {
    yield { table: 'Frames', rows: [[11, 'y']], bytes: 1 };
    yield { table: 'brand_new', rows: [[1]], bytes: 1 };
    throw new Error('the source broke');
  }
  const before = await storeQuery(dataDir, 'SELECT * FROM rigd_capture_tables ORDER BY capture_id, name');
  const err = await store.replace(1, [{ name: 'Frames', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'more', type: 'TEXT' }] }, { name: 'brand_new', columns: [{ name: 'a', type: '' }] }], failing()).catch((e: Error) => e);
  t.equal((err as Error).message, 'the source broke', 'the source error comes through');
  t.equal(await countRows(dataDir, 'Frames', 1), 1, "capture 1's rows as before");
  const tables = await storeQuery<{ table_name: string }>(dataDir, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'rigd_captures' AND table_name = 'brand_new'");
  t.deepEqual(tables, [], 'no new table');
  const cols = await storeQuery<{ column_name: string }>(dataDir, "SELECT column_name FROM information_schema.columns WHERE table_schema = 'rigd_captures' AND column_name = 'more'");
  t.equal(cols.length, 0, 'no new column');
  t.deepEqual(await storeQuery(dataDir, 'SELECT * FROM rigd_capture_tables ORDER BY capture_id, name'), before, 'the catalog as before');
  await store.close();
});

test('a wide table lands whole in a table of its own shape; two writers at once take turns', async (t) => {
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
  const held = await storeQuery<{ physical: string }>(dataDir, "SELECT DISTINCT physical FROM rigd_capture_tables WHERE name = 'wide'");
  t.equal(held.length, 1, 'both captures of that shape in one table');
  t.match(held[0]!.physical, /^wide~[0-9a-f]{16}$/, `wider than captures.max_shared_columns: a table of its own shape (${held[0]!.physical})`);
  const [r] = await storeQuery<{ n: number; s: number }>(dataDir, `SELECT count(*) AS n, sum((c299)::numeric) AS s FROM "${held[0]!.physical}" WHERE capture_id = 5`);
  t.deepEqual([Number(r!.n), Number(r!.s)], [1000, rows.reduce((s, x) => s + x[299]!, 0)], 'all 1000 rows of 300 columns');
  t.equal(await countRows(dataDir, held[0]!.physical, 6), 1000, 'and the other writer\'s');
});

test('the reader\'s query is read-only: writes and DDL are refused by the server, the store unchanged', async (t) => {
  if (postgresOnly(t, 'the PostgreSQL store schema')) return;
  const reader = (await openTestReader(dataDir))!;
  const ok = await reader.query('SELECT id FROM "Frames" WHERE capture_id = 1', { limit: 10, timeoutMs: 60_000 });
  t.deepEqual(ok, { rows: [{ id: 10 }], truncated: false }, 'the store schema is the search path (a name with capitals is quoted, as PostgreSQL wants)');
  for (const sql of ['INSERT INTO "Frames" (capture_id) VALUES (99)', 'CREATE TABLE x (a int)', 'DELETE FROM "Frames"', 'DROP TABLE wide']) {
    const err = await reader.query(sql, { limit: 10, timeoutMs: 60_000 }).catch((e: unknown) => e);
    t.ok(err instanceof StoreQueryError && err.reason === 'read_only', `${sql}: refused (${(err as Error).message})`);
  }
  const slow = await reader.query('SELECT pg_sleep(5)', { limit: 10, timeoutMs: 200 }).catch((e: unknown) => e);
  t.ok(slow instanceof StoreQueryError && slow.reason === 'timeout', 'stopped by statement_timeout');
  const many = await reader.query('SELECT generate_series(1, 50) AS n', { limit: 10, timeoutMs: 60_000 });
  t.deepEqual([many.rows.length, many.truncated], [10, true], 'at most limit rows, and says there were more');
  await reader.close();
  t.equal(await countRows(dataDir, 'Frames', 1), 1, 'the store unchanged');
});

test("doctor's capture_store check: the schema's table count and size; a database without it is fine", async (t) => {
  if (postgresOnly(t, 'the PostgreSQL store schema')) return;
  const { checkPgCaptureStore } = await import('../../../src/services/doctor/capture-store-postgres.ts');
  const found = await checkPgCaptureStore(databaseUrlFor(dataDir));
  t.equal(found.status, 'ok', 'ok');
  t.match(found.message, /^schema rigd_captures of postgres:\/\/\S+ opens: 3 capture tables, \d+\.\d MB$/, found.message);
  const none = await checkPgCaptureStore(databaseUrlFor(dataDir), 'rigd_no_such_schema');
  t.deepEqual([none.status, /does not exist yet/.test(none.message)], ['ok', true], none.message);
});
