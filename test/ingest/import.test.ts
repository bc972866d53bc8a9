// The import of captures into the capture store, end to end with real files and the sandboxed child:
// three tables with blobs and NULLs; a table whose schema grows between captures; a repeat replaces
// rather than duplicates; time spans; refusals leave the store untouched; imports take turns.
import path from 'node:path';
import test from 'tape';
import type { CaptureStoreWriter } from '../../src/db/capture-store/index.ts';
import { onPostgres, sqliteOnly } from '../helpers/dialect.ts';
import { CaptureRejected, type CaptureInfo } from '../../src/ingest/capture-file.ts';
import { importCapture, type ImportOptions, type ImportProgress } from '../../src/ingest/import.ts';
import { captureIndexName } from '../../src/db/capture-store/placement.ts';
import { corruptPage, makeCapture, makeHostileCapture, truncateCopy, type HostileKind, type MadeCapture } from '../helpers/capture-files.ts';
import { countRows, openTestStore as openCaptureStore, sqlCapture, storeQuery } from '../helpers/capture-store.ts';

/** The store's tables (PostgreSQL: of schema rigd_captures). */
const TABLES_SQL = onPostgres
  ? "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'rigd_captures' AND table_name NOT LIKE 'rigd\\_%' ORDER BY table_name"
  : "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'rigd\\_%' ESCAPE '\\' ORDER BY name";
/** The store's schema as text, to compare before and after. */
const SCHEMA_SQL = onPostgres
  ? "SELECT table_name AS name, string_agg(column_name || ' ' || data_type, ', ' ORDER BY ordinal_position) AS sql FROM information_schema.columns WHERE table_schema = 'rigd_captures' GROUP BY table_name ORDER BY table_name"
  : 'SELECT name, sql FROM sqlite_schema ORDER BY name';
/** A store table's column names in order. */
const columnsSql = (table: string) =>
  onPostgres
    ? `SELECT column_name AS name FROM information_schema.columns WHERE table_schema = 'rigd_captures' AND table_name = '${table}' ORDER BY ordinal_position`
    : `SELECT name FROM pragma_table_info('${table}')`;
/** Bytes of a blob column's values. */
const num = (col: string) => (onPostgres ? `(${col})::numeric` : col);
const blobLength = (col: string) => (onPostgres ? `length(decode(${col}->>'base64', 'base64'))` : `length(${col})`);
import { tmpDir } from '../helpers/tmp.ts';

const dir = tmpDir('rigd-import-');
const dataDir = path.join(dir, 'data');
const OPTS: ImportOptions = { maxBytes: 200 * 1024 * 1024, timeoutMs: 120_000 };
let store: CaptureStoreWriter;
let one: MadeCapture;

async function failure(p: Promise<unknown>): Promise<Error | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return err as Error;
  }
}

/** Capture 1: frames (blobs, NULLs, a declared-less column), sensors (ms times), notes (ISO text). */
const first = () =>
  sqlCapture(
    path.join(dir, 'one.sqlite'),
    'CREATE TABLE frames (id INTEGER PRIMARY KEY, ts INTEGER, data BLOB, extra)',
    "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 2500) INSERT INTO frames SELECT n, 1700000000 + n, CASE WHEN n % 10 = 0 THEN NULL ELSE randomblob(n % 300) END, CASE n % 3 WHEN 0 THEN NULL WHEN 1 THEN x'00ff' ELSE 'text' END FROM s",
    'CREATE TABLE sensors (name TEXT, reading REAL, seen_at INTEGER)',
    "INSERT INTO sensors VALUES ('a', 1.5, 1700000000123), ('b', NULL, 1700000999000), (NULL, -2, 1700000500000)",
    'CREATE TABLE notes (body TEXT, created DATETIME)',
    "INSERT INTO notes VALUES ('hello', '2024-03-01 12:00:00'), ('later', '2024-03-02T08:30:00Z'), (NULL, NULL)",
  );

test('three tables with blobs and NULLs: every row and value lands, with capture_id, types kept', async (t) => {
  store = await openCaptureStore(dataDir);
  one = await first();
  const cap = one;
  const progress: ImportProgress[] = [];
  const steps: string[] = [];
  let info: CaptureInfo | undefined;
  const tables = await importCapture(cap.path, 1, store, { ...OPTS, onProgress: (p) => progress.push(p), onStep: (s) => steps.push(s), onInspected: (i) => (info = i) });
  if (onPostgres) t.deepEqual(steps, ['header', 'started', 'opened', 'schema', 'quick_check', 'tables', 'import'], 'the inspection steps, then the import');
  // SQLite: the copy starts after the page walk; quick_check and the bounds run alongside it ('import:checks': the copy waits for them).
  else t.deepEqual(steps.filter((s) => s !== 'import:checks'), ['header', 'started', 'opened', 'schema', 'tables', 'import'], 'the inspection steps, then the import (the checks alongside)');
  t.deepEqual([info?.sizeBytes, info?.pageSize, info?.tables.map((x) => x.rows)], [cap.sizeBytes, 4096, [2500, 3, 3]], 'what the inspection found');
  t.deepEqual(
    tables.map((x) => [x.name, x.rows, x.columns.map((c) => c.name).join(',')]),
    [['frames', 2500, 'id,ts,data,extra'], ['sensors', 3, 'name,reading,seen_at'], ['notes', 3, 'body,created']],
    'a summary per table in schema order, columns in the capture order',
  );
  t.equal(await countRows(dataDir, 'frames', 1), 2500, '2500 frames');
  const [f] = await storeQuery<Record<string, unknown>>(
    dataDir,
    onPostgres
      ? "SELECT count(*) AS n, sum((data IS NULL)::int) AS null_data, sum((jsonb_typeof(data) = 'object')::int) AS blobs, sum((jsonb_typeof(extra) = 'object')::int) AS extra_blobs, sum((jsonb_typeof(extra) = 'string')::int) AS extra_text, sum((extra IS NULL)::int) AS extra_null, sum(length(decode(data->>'base64', 'base64'))) AS data_bytes FROM frames WHERE capture_id = 1"
      : "SELECT count(*) AS n, sum(data IS NULL) AS null_data, sum(typeof(data) = 'blob') AS blobs, sum(typeof(extra) = 'blob') AS extra_blobs, sum(typeof(extra) = 'text') AS extra_text, sum(extra IS NULL) AS extra_null, sum(length(data)) AS data_bytes FROM frames WHERE capture_id = 1",
  );
  t.deepEqual(
    [f!.null_data, f!.blobs, f!.extra_blobs, f!.extra_text, f!.extra_null],
    [250, 2250, 834, 833, 833],
    'NULLs stay NULL, blobs stay blobs, a column without a type keeps each value as it was',
  );
  const bytes = Array.from({ length: 2500 }, (_, i) => i + 1).filter((n) => n % 10 !== 0).reduce((s, n) => s + (n % 300), 0);
  t.equal(f!.data_bytes, bytes, 'blob lengths add up');
  const sensors = await storeQuery(dataDir, `SELECT capture_id, name, reading, seen_at FROM sensors ORDER BY ${onPostgres ? 'ctid' : 'rowid'}`);
  t.deepEqual(
    sensors,
    [
      { capture_id: 1, name: 'a', reading: 1.5, seen_at: 1700000000123 },
      { capture_id: 1, name: 'b', reading: null, seen_at: 1700000999000 },
      { capture_id: 1, name: null, reading: -2, seen_at: 1700000500000 },
    ],
    'sensors row by row',
  );
  const decl = await storeQuery<{ name: string; type: string }>(
    dataDir,
    onPostgres
      ? "SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_schema = 'rigd_captures' AND table_name = 'frames' ORDER BY ordinal_position"
      : "SELECT name, type FROM pragma_table_info('frames')",
  );
  const [int, none] = onPostgres ? ['bigint', 'jsonb'] : ['INTEGER', ''];
  t.deepEqual(decl.map((c) => [c.name, c.type]), [['capture_id', int], ['id', none], ['ts', none], ['data', none], ['extra', none]], 'store columns: capture_id first, then the capture columns without a type (no affinity; jsonb carrying the class on PostgreSQL)');
  const idx = await storeQuery<{ name: string }>(
    dataDir,
    onPostgres
      ? "SELECT indexname AS name FROM pg_indexes WHERE schemaname = 'rigd_captures' AND tablename = 'frames'"
      : "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'frames'",
  );
  t.deepEqual(idx.map((i) => i.name), [captureIndexName('frames')], 'an index on capture_id');
  t.ok(progress.length > 1, `progress in several steps (${progress.length})`);
  t.deepEqual(progress.at(-1)!.rows, 2506, 'progress ends at the row total');
  t.ok(progress.every((p, i) => i === 0 || p.rows > progress[i - 1]!.rows), 'rows only grow');
});

test('time spans: epoch seconds, epoch milliseconds, ISO and SQLite datetime text', async (t) => {
  const tables = await importCapture(one.path, 1, store, OPTS);
  const spans = Object.fromEntries(tables.map((x) => [x.name, [x.time_column, x.first, x.last]]));
  t.deepEqual(spans.frames, ['ts', new Date(1700000001 * 1000).toISOString(), new Date(1700002500 * 1000).toISOString()], 'seconds');
  t.deepEqual(spans.sensors, ['seen_at', '2023-11-14T22:13:20.123Z', '2023-11-14T22:29:59.000Z'], 'milliseconds');
  t.deepEqual(spans.notes, ['created', '2024-03-01T12:00:00.000Z', '2024-03-02T08:30:00.000Z'], 'datetime text, by declared type');
});

test("a table whose schema grows: the second capture adds a column, the first capture's rows get NULL there", async (t) => {
  const a = await sqlCapture(path.join(dir, 'grow-a.sqlite'), 'CREATE TABLE gps (lat REAL, lon REAL)', 'INSERT INTO gps VALUES (52.1, 4.3), (52.2, 4.4)');
  const b = await sqlCapture(
    path.join(dir, 'grow-b.sqlite'),
    'CREATE TABLE GPS (alt INTEGER, lon REAL, lat REAL, fix_time TEXT)',
    "INSERT INTO GPS VALUES (12, 5.5, 51.0, '2025-01-01T00:00:00+02:00')",
  );
  const ta = await importCapture(a.path, 10, store, OPTS);
  const tb = await importCapture(b.path, 11, store, OPTS);
  t.deepEqual(ta[0]!.columns.map((c) => c.name), ['lat', 'lon'], 'first capture: its column order');
  t.deepEqual(tb[0]!.columns.map((c) => c.name), ['alt', 'lon', 'lat', 'fix_time'], 'second capture: its own column order');
  t.deepEqual([tb[0]!.name, tb[0]!.time_column, tb[0]!.first], ['GPS', 'fix_time', '2024-12-31T22:00:00.000Z'], 'its own spelling; a zone in ISO text is honoured');
  if (onPostgres) {
    // PostgreSQL compares quoted names exactly: gps and GPS are two tables, each of its captures' shape.
    t.deepEqual((await storeQuery<{ name: string }>(dataDir, columnsSql('gps'))).map((c) => c.name), ['capture_id', 'lat', 'lon'], 'gps as the first capture made it');
    t.deepEqual((await storeQuery<{ name: string }>(dataDir, columnsSql('GPS'))).map((c) => c.name), ['capture_id', 'alt', 'lon', 'lat', 'fix_time'], 'GPS a table of its own name');
    t.deepEqual(
      await storeQuery(dataDir, 'SELECT capture_id, lat, lon, alt, fix_time FROM "GPS"'),
      [{ capture_id: 11, lat: 51.0, lon: 5.5, alt: 12, fix_time: '2025-01-01T00:00:00+02:00' }],
      'each value in its own column',
    );
    return;
  }
  const cols = await storeQuery<{ name: string }>(dataDir, columnsSql('gps'));
  t.deepEqual(cols.map((c) => c.name), ['capture_id', 'lat', 'lon', 'alt', 'fix_time'], 'one table (SQLite compares ASCII names without case), new columns added at the end');
  const rows = await storeQuery(dataDir, 'SELECT capture_id, lat, lon, alt, fix_time FROM gps ORDER BY capture_id, lat');
  t.deepEqual(
    rows,
    [
      { capture_id: 10, lat: 52.1, lon: 4.3, alt: null, fix_time: null },
      { capture_id: 10, lat: 52.2, lon: 4.4, alt: null, fix_time: null },
      { capture_id: 11, lat: 51.0, lon: 5.5, alt: 12, fix_time: '2025-01-01T00:00:00+02:00' },
    ],
    'each value in its own column, NULL where a capture lacks the column',
  );
});

test('a repeat of the same capture does not duplicate rows; a changed file replaces them', async (t) => {
  await importCapture(one.path, 1, store, OPTS);
  t.equal(await countRows(dataDir, 'frames', 1), 2500, 'still 2500 frames after three imports');
  t.equal(await countRows(dataDir, 'gps', 10), 2, 'other captures untouched');
  const changed = await sqlCapture(path.join(dir, 'changed.sqlite'), 'CREATE TABLE sensors (name TEXT, reading REAL, seen_at INTEGER)', "INSERT INTO sensors VALUES ('z', 9.5, 1)");
  const tables = await importCapture(changed.path, 1, store, OPTS);
  t.deepEqual(tables.map((x) => [x.name, x.rows]), [['sensors', 1]], 'the new file has one table');
  t.deepEqual(await storeQuery(dataDir, 'SELECT name, reading FROM sensors WHERE capture_id = 1'), [{ name: 'z', reading: 9.5 }], 'its rows replace the old ones');
  t.equal(await countRows(dataDir, 'frames', 1), 0, "rows of tables the capture no longer has are gone");
  await importCapture(one.path, 1, store, OPTS);
  t.equal(await countRows(dataDir, 'frames', 1), 2500, 'and back');
});

test('a capture column named capture_id (any case) is refused, and so is a table named like a store index', async (t) => {
  const bad = await sqlCapture(path.join(dir, 'capid.sqlite'), 'CREATE TABLE t (a INTEGER, Capture_ID INTEGER)', 'INSERT INTO t VALUES (1, 2)');
  const err = await failure(importCapture(bad.path, 20, store, OPTS));
  t.ok(err instanceof CaptureRejected && err.reason === 'unsupported_schema', `unsupported_schema (${err?.message})`);
  t.match(err?.message ?? '', /column named "Capture_ID", which the capture store reserves/, 'says which column');
  const idx = await sqlCapture(path.join(dir, 'idxname.sqlite'), 'CREATE TABLE "frames.capture_id" (a)');
  const err2 = await failure(importCapture(idx.path, 21, store, OPTS));
  t.ok(err2 instanceof CaptureRejected && err2.reason === 'unsupported_schema', `unsupported_schema (${err2?.message})`);
  const tables = await storeQuery<{ name: string }>(dataDir, TABLES_SQL);
  t.notOk(tables.some((x) => x.name === 't'), 'nothing created in the store');
});

test('hostile and broken files are refused as by the inspector, the store untouched', async (t) => {
  const before = await storeQuery(dataDir, SCHEMA_SQL);
  const kinds: [HostileKind, string][] = [
    ['random_bytes', 'not_sqlite'],
    ['trigger', 'unsupported_schema'],
    ['view_functions', 'unsupported_schema'],
    ['fts5', 'unsupported_schema'],
    ['check_function', 'unsupported_schema'],
    ['default_function', 'unsupported_schema'],
    ['generated_column', 'unsupported_schema'],
    ['expression_index', 'unsupported_schema'],
    ['custom_collation', 'unsupported_schema'],
    ['forged_trigger_type', 'corrupt'],
  ];
  let id = 100;
  for (const [kind, reason] of kinds) {
    const file = path.join(dir, `hostile-${kind}.sqlite`);
    await makeHostileCapture(file, kind);
    const err = await failure(importCapture(file, id++, store, OPTS));
    t.ok(err instanceof CaptureRejected && err.reason === reason, `${kind}: ${reason} (${err?.message})`);
  }
  const src = await makeCapture(path.join(dir, 'src.sqlite'));
  await truncateCopy(src.path, path.join(dir, 'half.sqlite'));
  const trunc = await failure(importCapture(path.join(dir, 'half.sqlite'), id++, store, OPTS));
  t.ok(trunc instanceof CaptureRejected && trunc.reason === 'truncated', `truncated (${trunc?.message})`);
  const bad = await makeCapture(path.join(dir, 'corrupt.sqlite'));
  await corruptPage(bad.path);
  const corrupt = await failure(importCapture(bad.path, id++, store, OPTS));
  t.ok(corrupt instanceof CaptureRejected && corrupt.reason === 'corrupt', `corrupt (${corrupt?.message})`);
  const big = await failure(importCapture(one.path, id++, store, { ...OPTS, maxBytes: 1000 }));
  t.ok(big instanceof CaptureRejected && big.reason === 'too_large', `too_large (${big?.message})`);
  t.deepEqual(await storeQuery(dataDir, SCHEMA_SQL), before, 'the store schema is unchanged');
  let refusedRows = 0;
  for (const { name } of await storeQuery<{ name: string }>(dataDir, TABLES_SQL)) {
    const [n] = await storeQuery<{ n: number }>(dataDir, `SELECT count(*) AS n FROM "${name}" WHERE capture_id BETWEEN 100 AND ?`, [id]);
    refusedRows += n!.n;
  }
  t.equal(refusedRows, 0, 'no rows of refused captures in any table');
});

test('timeout and abort roll back: the earlier rows of the capture stay', async (t) => {
  const timeout = await failure(importCapture(one.path, 1, store, { ...OPTS, timeoutMs: 1 }));
  t.ok(timeout instanceof CaptureRejected && timeout.reason === 'timeout', `timeout (${timeout?.message})`);
  const ac = new AbortController();
  const aborted = await failure(
    importCapture(one.path, 1, store, { ...OPTS, signal: ac.signal, onProgress: (p) => p.rows > 1000 && ac.abort() }),
  );
  t.equal(aborted?.name, 'AbortError', `aborted mid-import (${aborted?.message})`);
  t.equal(await countRows(dataDir, 'frames', 1), 2500, 'the committed rows of capture 1 are all still there');
});

test('two imports at once take turns: both complete, no SQLITE_BUSY', async (t) => {
  const a = await makeCapture(path.join(dir, 'turn-a.sqlite'), { tables: [{ name: 'readings', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'p', type: 'BLOB' }], rows: 30_000 }] });
  const other = await openCaptureStore(dataDir); // a second writer object on the same file in this process
  const order: string[] = [];
  const [ra, rb] = await Promise.all([
    importCapture(a.path, 200, store, { ...OPTS, onProgress: () => order.push('a') }),
    importCapture(a.path, 201, other, { ...OPTS, onProgress: () => order.push('b') }),
  ]);
  await other.close();
  t.deepEqual([ra[0]!.rows, rb[0]!.rows], [30_000, 30_000], 'both imported');
  t.deepEqual([await countRows(dataDir, 'readings', 200), await countRows(dataDir, 'readings', 201)], [30_000, 30_000], 'both committed');
  const switches = order.filter((x, i) => i > 0 && x !== order[i - 1]).length;
  t.equal(switches, 1, `one after the other, not interleaved (${order.length} progress reports)`);
});

test('a WITHOUT ROWID table, a table with a column named rowid and rowids beyond 2^53 are read whole, in key order', async (t) => {
  const cap = await sqlCapture(
    path.join(dir, 'keys.sqlite'),
    'CREATE TABLE kv (k TEXT, n INTEGER, v BLOB, PRIMARY KEY (k, n)) WITHOUT ROWID',
    "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 2345) INSERT INTO kv SELECT 'k' || (i % 7), i, randomblob(10) FROM s",
    'CREATE TABLE odd (rowid TEXT, x INTEGER)',
    // rowids beyond 2^53, one apart: paging by them must be exact.
    'CREATE TABLE far (id INTEGER PRIMARY KEY, v TEXT)',
    "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 250) INSERT INTO far SELECT 9223372036854775807 - i, 'v' || i FROM s",
    "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 1500) INSERT INTO odd SELECT 'r' || i, i FROM s",
  );
  const tables = await importCapture(cap.path, 300, store, { ...OPTS, batchRows: 100 });
  t.deepEqual(tables.map((x) => [x.name, x.rows]), [['kv', 2345], ['odd', 1500], ['far', 250]], 'all rows');
  const [far] = await storeQuery<{ n: number }>(dataDir, 'SELECT count(DISTINCT v) AS n FROM far WHERE capture_id = 300');
  t.equal(far!.n, 250, 'rowids near 2^63, one apart, each row once');
  const [kv] = await storeQuery<{ n: number; s: number }>(dataDir, `SELECT count(DISTINCT k || n) AS n, sum(${num('n')}) AS s FROM kv WHERE capture_id = 300`);
  t.deepEqual([kv!.n, kv!.s], [2345, (2345 * 2346) / 2], 'each key once');
  const [odd] = await storeQuery<{ n: number; s: number }>(dataDir, `SELECT count(DISTINCT "rowid") AS n, sum(${num('x')}) AS s FROM odd WHERE capture_id = 300`);
  t.deepEqual([odd!.n, odd!.s], [1500, (1500 * 1501) / 2], 'the column named rowid keeps its values');
});

test('batches (the path without copy in the engine) are bounded by bytes as well as rows: 1 MiB blobs travel a few at a time', async (t) => {
  const cap = await sqlCapture(
    path.join(dir, 'fat.sqlite'),
    'CREATE TABLE fat (id INTEGER PRIMARY KEY, data BLOB)',
    'WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 40) INSERT INTO fat SELECT i, randomblob(1048576) FROM s',
  );
  const steps: number[] = [];
  let last = 0;
  // The batch path (PostgreSQL's; on SQLite rows are copied in the engine, without batches).
  const batched: CaptureStoreWriter = { bounds: store.bounds, replace: (...a) => store.replace(...a), close: async () => undefined };
  await importCapture(cap.path, 400, batched, { ...OPTS, batchBytes: 4 * 1024 * 1024, onProgress: (p) => (steps.push(p.rows - last), (last = p.rows)) });
  t.equal(steps.reduce((a, b) => a + b, 0), 40, 'all 40 rows');
  t.ok(steps.length >= 10 && steps.every((n) => n <= 4), `at most 4 MiB per batch (${steps.join(',')})`);
  const [row] = await storeQuery<{ n: number; b: number }>(dataDir, `SELECT count(*) AS n, sum(${blobLength('data')}) AS b FROM fat WHERE capture_id = 400`);
  t.deepEqual([row!.n, row!.b], [40, 40 * 1048576], 'every byte');
});

test('in the engine (SQLite), the copy runs alongside quick_check and the bounds and commits only once both passed', async (t) => {
  if (sqliteOnly(t, 'the copy in the engine is the SQLite store\'s')) return;
  const timed = await makeCapture(path.join(dir, 'overlap.sqlite'), { tables: [{ name: 'samples', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'p', type: 'BLOB' }], rows: 20_000 }] });
  let timings: Record<string, number> | undefined;
  const tables = await importCapture(timed.path, 500, store, { ...OPTS, onTimings: (x) => (timings = x) });
  t.deepEqual(tables.map((x) => [x.name, x.rows]), [['samples', 20_000]], 'imported');
  t.deepEqual(Object.keys(timings ?? {}).sort(), ['copy', 'quick_check', 'tables'], `when each overlapped part ended (${JSON.stringify(timings)})`);
  t.ok(timings!.tables >= timings!.quick_check, 'the bounds after quick_check, on the capture\'s connection');

  const before = await storeQuery(dataDir, SCHEMA_SQL);
  const refused = async (file: string, id: number, opts: Partial<ImportOptions> = {}) => {
    const steps: string[] = [];
    const err = await failure(importCapture(file, id, store, { ...OPTS, ...opts, onStep: (x) => steps.push(x) }));
    return { err, steps };
  };
  // A damaged page that quick_check reports: the copy had begun (its step came first), nothing of it is committed.
  const bad = await makeCapture(path.join(dir, 'overlap-corrupt.sqlite'), { tables: [{ name: 'samples', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'p', type: 'BLOB' }], rows: 20_000 }] });
  await corruptPage(bad.path);
  const corrupt = await refused(bad.path, 501);
  t.ok(corrupt.err instanceof CaptureRejected && corrupt.err.reason === 'corrupt', `corrupt (${corrupt.err?.message})`);
  t.ok(corrupt.steps.includes('import') && !corrupt.steps.includes('quick_check'), `refused after the copy began (${corrupt.steps.join(',')})`);
  // A value over the limit: the copy's connection may hold it, the bounds refuse it before the commit.
  const wide = await sqlCapture(path.join(dir, 'overlap-wide.sqlite'), 'CREATE TABLE samples (id INTEGER PRIMARY KEY, p BLOB)', 'INSERT INTO samples VALUES (1, randomblob(10)), (2, randomblob(70000))');
  const tooLarge = await refused(wide.path, 502, { maxValueBytes: 65536 });
  t.ok(tooLarge.err instanceof CaptureRejected && tooLarge.err.reason === 'row_too_large', `row_too_large (${tooLarge.err?.message})`);
  t.ok(tooLarge.steps.includes('import'), `refused after the copy began (${tooLarge.steps.join(',')})`);
  t.deepEqual([await countRows(dataDir, 'samples', 501), await countRows(dataDir, 'samples', 502)], [0, 0], 'no rows of either refused capture');
  t.deepEqual(await storeQuery(dataDir, SCHEMA_SQL), before, 'the store schema is as before');
});

test('close', async (t) => {
  await store.close();
  t.pass('store closed');
});
