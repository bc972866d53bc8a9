// One capture can neither block, widen nor slow another's import, on both engines: a 1,995-column
// capture fails alone with too_wide (nothing stored) and an ordinary capture of that table imports
// after it into a table no wider than before; a capture wider than a shared table may grow gets a
// table of its own shape; a capture over captures.max_tables fails alone with too_many_tables; after
// two 1,000-table captures a small capture's import touches only its own tables (the catalog says
// which) and its time is printed as a ratio of the same import on an empty store.
import path from 'node:path';
import test from 'tape';
import { DEFAULT_BOUNDS, type CaptureStoreWriter } from '../../src/db/capture-store/index.ts';
import { openStoreWriter } from '../../src/db/capture-store/open-writer.ts';
import { CaptureRejected } from '../../src/ingest/capture-file.ts';
import { importCapture, type ImportOptions } from '../../src/ingest/import.ts';
import { makeCapture } from '../helpers/capture-files.ts';
import { openTestStore, sqlCapture, storeQuery } from '../helpers/capture-store.ts';
import { databaseUrlFor, onPostgres } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { captureCanon, located, storeCanon } from './store-values.ts';

const dir = tmpDir('rigd-store-isolation-');
const dataDir = path.join(dir, 'data');
const OPTS: ImportOptions = { maxBytes: 100 * 1024 * 1024, timeoutMs: 300_000 };

async function failure(p: Promise<unknown>): Promise<Error | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return err as Error;
  }
}

/** The store's physical tables and their widths (catalog tables left out). */
async function schema(dd: string): Promise<Record<string, number>> {
  const rows = onPostgres
    ? await storeQuery<{ name: string; n: number }>(
        dd,
        "SELECT table_name AS name, count(*)::int AS n FROM information_schema.columns WHERE table_schema = 'rigd_captures' AND table_name NOT LIKE 'rigd\\_%' GROUP BY 1 ORDER BY 1",
      )
    : await storeQuery<{ name: string; n: number }>(
        dd,
        "SELECT m.name AS name, (SELECT count(*) FROM pragma_table_info(m.name)) AS n FROM sqlite_schema m WHERE m.type = 'table' AND m.name NOT LIKE 'rigd\\_%' ESCAPE '\\' ORDER BY 1",
      );
  return Object.fromEntries(rows.map((r) => [r.name, Number(r.n)]));
}

async function catalogOf(dd: string, id: number): Promise<string[]> {
  const rows = await storeQuery<{ name: string; physical: string }>(dd, 'SELECT name, physical FROM rigd_capture_tables WHERE capture_id = ? ORDER BY name', [id]);
  return rows.map((r) => `${r.name}->${r.physical}`);
}

const ordinary = (file: string) =>
  sqlCapture(
    file,
    'CREATE TABLE frames (id INTEGER PRIMARY KEY, ts INTEGER, label TEXT, data BLOB)',
    "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 2000) INSERT INTO frames SELECT n, 1700000000 + n, 'f' || n, randomblob(16) FROM s",
  );

const wide = (file: string, columns: number, rows: number) => {
  const cols = Array.from({ length: columns }, (_, i) => `c${i} INTEGER`).join(', ');
  const vals = Array.from({ length: columns }, (_, i) => String(i)).join(', ');
  return sqlCapture(file, `CREATE TABLE frames (${cols})`, ...Array.from({ length: rows }, () => `INSERT INTO frames VALUES (${vals})`));
};

let store: CaptureStoreWriter;

test('a 1,995-column capture fails alone with too_wide; an ordinary capture after it imports, the shared table no wider', async (t) => {
  store = await openTestStore(dataDir);
  const base = await ordinary(path.join(dir, 'base.sqlite'));
  await importCapture(base.path, 1, store, OPTS);
  const before = await schema(dataDir);
  const fat = await wide(path.join(dir, 'wide-1995.sqlite'), 1995, 20);
  const err = await failure(importCapture(fat.path, 2, store, OPTS));
  t.ok(err instanceof CaptureRejected && err.reason === 'too_wide', `too_wide (${err?.message})`);
  t.match(err?.message ?? '', /1995 columns, more than the 1000/, 'the message says how wide and the bound');
  t.deepEqual(await schema(dataDir), before, 'the store schema is unchanged');
  t.deepEqual(await catalogOf(dataDir, 2), [], 'nothing of the refused capture recorded');
  const next = await ordinary(path.join(dir, 'next.sqlite'));
  const tables = await importCapture(next.path, 3, store, OPTS);
  t.deepEqual(tables.map((x) => [x.name, x.rows]), [['frames', 2000]], 'the ordinary capture imports');
  t.deepEqual(await schema(dataDir), before, 'into the same table, no wider (5 columns)');
  t.deepEqual(await storeCanon(dataDir, 3, 'frames', ['id', 'ts', 'label', 'data']), await captureCanon(next.path, 'frames', ['id', 'ts', 'label', 'data']), 'every value exact');
});

test('a capture wider than a shared table may grow gets a table of its own shape; later ordinary captures never see its columns', async (t) => {
  const before = await schema(dataDir);
  const w = await wide(path.join(dir, 'wide-300.sqlite'), 300, 50);
  await importCapture(w.path, 4, store, OPTS);
  const own = (await located(dataDir, 4, 'frames')).physical;
  t.match(own, /^frames~[0-9a-f]{16}$/, `own shape: ${own}`);
  const after = await schema(dataDir);
  t.deepEqual({ ...after, [own]: undefined }, { ...before, [own]: undefined }, 'the shared frames table unchanged');
  t.equal(after[own], 301, 'its own table: capture_id and its 300 columns');
  // A few new columns: into the shared table, within captures.max_new_shared_columns.
  const more = await sqlCapture(path.join(dir, 'more.sqlite'), 'CREATE TABLE frames (id INTEGER, ts INTEGER, extra TEXT)', "INSERT INTO frames VALUES (1, 2, 'x')");
  await importCapture(more.path, 5, store, OPTS);
  t.equal((await located(dataDir, 5, 'frames')).physical, 'frames', 'a capture adding one column shares the table');
  t.equal((await schema(dataDir)).frames, 6, 'which grows by that one column');
  // Over captures.max_new_shared_columns: its own shape even though the shared table has room.
  const cols = Array.from({ length: DEFAULT_BOUNDS.maxNewSharedColumns + 1 }, (_, i) => `n${i}`);
  const many = await sqlCapture(path.join(dir, 'many.sqlite'), `CREATE TABLE frames (id INTEGER, ${cols.join(', ')})`, `INSERT INTO frames (id) VALUES (1)`);
  await importCapture(many.path, 6, store, OPTS);
  t.notEqual((await located(dataDir, 6, 'frames')).physical, 'frames', `${cols.length} new columns: a table of its own shape`);
  t.equal((await schema(dataDir)).frames, 6, 'the shared table no wider');
});

test('a capture over captures.max_tables fails alone with too_many_tables', async (t) => {
  const small = await openStoreWriter(dataDir, databaseUrlFor(dataDir), { ...DEFAULT_BOUNDS, maxTables: 5 });
  const six = await sqlCapture(path.join(dir, 'six.sqlite'), ...Array.from({ length: 6 }, (_, i) => `CREATE TABLE t${i} (a)`));
  const before = await schema(dataDir);
  const err = await failure(importCapture(six.path, 7, small, OPTS));
  t.ok(err instanceof CaptureRejected && err.reason === 'too_many_tables', `too_many_tables (${err?.message})`);
  t.match(err?.message ?? '', /6 tables, more than the 5/, 'the message says how many and the bound');
  t.deepEqual(await schema(dataDir), before, 'nothing created');
  const five = await sqlCapture(path.join(dir, 'five.sqlite'), ...Array.from({ length: 5 }, (_, i) => `CREATE TABLE t${i} (a)`));
  t.equal((await importCapture(five.path, 8, small, OPTS)).length, 5, 'five tables import');
  await small.close();
});

/** A capture of `n` tables named prefix0..prefixN-1, each with a few rows. */
function manyTables(file: string, prefix: string, n: number) {
  return makeCapture(file, { tables: Array.from({ length: n }, (_, i) => ({ name: `${prefix}${i}`, columns: [{ name: 'id', type: 'INTEGER' }, { name: 'v', type: 'TEXT' }], rows: 3 })) });
}

test('after two 1,000-table captures, a small capture touches only its own tables; its time against an empty store, as a ratio', async (t) => {
  const small = await ordinary(path.join(dir, 'small.sqlite'));
  // The same import on an empty store first (its own data_dir, so its own database on PostgreSQL).
  const emptyDir = path.join(dir, 'empty-data');
  const empty = await openTestStore(emptyDir);
  /** The best of three runs (the machine is shared: the least disturbed run is the fairest figure). */
  const timed = async (s: CaptureStoreWriter, id: number) => {
    let best = Infinity;
    for (let i = 0; i < 3; i++) {
      const t0 = process.hrtime.bigint();
      await importCapture(small.path, id, s, OPTS);
      best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e6);
    }
    return best;
  };
  await importCapture(small.path, 1, empty, OPTS); // warm: the child's first start
  const onEmpty = await timed(empty, 1);
  await empty.close();

  const a = await manyTables(path.join(dir, 'thousand-a.sqlite'), 'a', 1000);
  const b = await manyTables(path.join(dir, 'thousand-b.sqlite'), 'b', 1000);
  t.equal((await importCapture(a.path, 100, store, OPTS)).length, 1000, 'a 1,000-table capture imports (within captures.max_tables)');
  t.equal((await importCapture(b.path, 101, store, OPTS)).length, 1000, 'and another');
  await importCapture(small.path, 102, store, OPTS);
  const catalogBefore = await storeQuery(dataDir, 'SELECT capture_id, name, physical, rows FROM rigd_capture_tables WHERE capture_id <> 102 ORDER BY capture_id, name');
  const onFull = await timed(store, 102); // repeats: each replaces its own rows only
  const res = await importCapture(small.path, 102, store, OPTS);
  t.deepEqual(res.map((x) => [x.name, x.rows]), [['frames', 2000]], 'the small capture imported');
  t.deepEqual(await catalogOf(dataDir, 102), ['frames->frames'], 'the catalog: its one table, in the shared frames table');
  t.deepEqual(
    await storeQuery(dataDir, 'SELECT capture_id, name, physical, rows FROM rigd_capture_tables WHERE capture_id <> 102 ORDER BY capture_id, name'),
    catalogBefore,
    'every other capture as it was',
  );
  t.equal(Object.keys(await schema(dataDir)).length >= 2001, true, `the store has ${Object.keys(await schema(dataDir)).length} tables`);
  t.comment(`small import: ${onEmpty.toFixed(0)} ms on an empty store, ${onFull.toFixed(0)} ms after 2,000 tables of other captures: ratio ${(onFull / onEmpty).toFixed(2)}`);
});

test('close', async (t) => {
  await store.close();
  t.pass('closed');
});
