// test: alone (a time budget kept to, and rigd's memory growth bounded)
// The capture inspector on real SQLite files: good captures described exactly, hostile and broken
// files rejected with the right reason while the inspector keeps working, the file never changed.
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile, copyFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'tape';
import { CaptureRejected, inspectCapture, type CaptureInfo, type InspectOptions } from '../../src/ingest/capture-file.ts';
import {
  corruptPage,
  DEFAULT_CAPTURE_TABLES,
  makeCapture,
  makeHostileCapture,
  makeHugeRowCapture,
  sha256File,
  truncateCopy,
  type HostileKind,
  type MadeCapture,
} from '../helpers/capture-files.ts';
import { withChildStoppedAtStep } from '../helpers/capture-child-stop.ts';
import { sqlCapture } from '../helpers/capture-store.ts';

const dir = await mkdtemp(path.join(os.tmpdir(), 'rigd-capture-'));
test.onFinish(() => void rm(dir, { recursive: true, force: true }));

// A budget no inspection here comes near, however loaded the machine (a child takes seconds to start then).
const OPTS: InspectOptions = { maxBytes: 100 * 1024 * 1024, timeoutMs: 120_000 };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

async function rejection(p: Promise<unknown>): Promise<CaptureRejected | Error | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return err as Error;
  }
}

/** Inspects `file` and checks that neither the file nor its directory changed. */
async function inspectUnchanged(t: test.Test, file: string, opts: InspectOptions = OPTS): Promise<CaptureInfo | CaptureRejected | Error> {
  const before = await sha256File(file);
  const listing = (await readdir(path.dirname(file))).sort();
  let out: CaptureInfo | Error;
  try {
    out = await inspectCapture(file, opts);
  } catch (err) {
    out = err as Error;
  }
  t.equal(await sha256File(file), before, `${path.basename(file)}: same sha256 after inspection`);
  t.deepEqual((await readdir(path.dirname(file))).sort(), listing, `${path.basename(file)}: no -wal/-shm/-journal or other file appeared`);
  return out;
}

let good: MadeCapture;

test('a real capture: exact tables, columns, row counts, pages; file unchanged', async (t) => {
  const d = await mkdtemp(path.join(dir, 'good-'));
  good = await makeCapture(path.join(d, 'good.sqlite'));
  const steps: string[] = [];
  const info = await inspectUnchanged(t, good.path, { ...OPTS, onStep: (s) => steps.push(s) });
  if (info instanceof Error) throw info;
  t.deepEqual(
    info.tables,
    DEFAULT_CAPTURE_TABLES.map((x) => ({ name: x.name, columns: x.columns, rows: x.rows })),
    'tables in schema order with their declared columns and exact row counts',
  );
  t.ok(info.tables.reduce((n, x) => n + x.rows, 0) >= 9000, 'thousands of rows');
  t.equal(info.sizeBytes, good.sizeBytes, 'sizeBytes');
  t.equal(info.pageSize, 4096, 'page size');
  t.equal(info.pageCount * info.pageSize, good.sizeBytes, 'page count x page size = file size');
  t.ok(info.sqliteVersion! >= 3_000_000 && info.sqliteVersion! < 4_000_000, `sqliteVersion from the header (${info.sqliteVersion})`);
  t.deepEqual(steps, ['header', 'started', 'opened', 'schema', 'quick_check', 'tables'], 'steps in order: schema policy, quick_check, then tables');
});

test('a capture in WAL mode with 8 KiB pages and indexes is read without creating -wal/-shm', async (t) => {
  const d = await mkdtemp(path.join(dir, 'wal-'));
  const cap = await makeCapture(path.join(d, 'wal.db'), {
    journalMode: 'wal',
    pageSize: 8192,
    tables: [
      {
        name: 'readings',
        columns: [
          { name: 'id', type: 'INTEGER PRIMARY KEY' },
          { name: 'sensor', type: 'TEXT NOT NULL DEFAULT \'x\' COLLATE NOCASE' },
          { name: 'v', type: 'NUMERIC(10, 2) CHECK (v >= 0)' },
        ],
        rows: 2500,
      },
      { name: 'sensors', columns: [{ name: 'name', type: 'TEXT UNIQUE' }], rows: 40 },
    ],
    extraSql: ['CREATE INDEX by_sensor ON readings (sensor, v DESC)', 'CREATE INDEX positive ON readings (v) WHERE v > 0'],
  });
  const head = await readFile(cap.path);
  t.deepEqual([head[18], head[19]], [2, 2], 'the file is in WAL mode (header versions 2/2)');
  const info = await inspectUnchanged(t, cap.path);
  if (info instanceof Error) throw info;
  t.deepEqual(info.tables.map((x) => [x.name, x.rows]), [['readings', 2500], ['sensors', 40]], 'row counts');
  t.deepEqual(
    info.tables[0]!.columns,
    [
      { name: 'id', type: 'INTEGER' },
      { name: 'sensor', type: 'TEXT' },
      { name: 'v', type: 'NUMERIC(10, 2)' },
    ],
    'declared types without their constraints',
  );
  t.equal(info.pageSize, 8192, 'page size from the file');
});

/** Runs one broken file, then checks the inspector still describes the good capture. */
async function expectRejected(t: test.Test, file: string, reason: string, message: RegExp, opts: InspectOptions = OPTS) {
  const out = await inspectUnchanged(t, file, opts);
  t.ok(out instanceof CaptureRejected, `${path.basename(file)}: rejected with CaptureRejected`);
  if (out instanceof CaptureRejected) {
    t.equal(out.reason, reason, `${path.basename(file)}: reason ${reason}`);
    t.match(out.message, message, `${path.basename(file)}: message "${out.message}"`);
    t.ok(/^[A-Z].*\.$/s.test(out.message) && !out.message.includes('\n'), 'one sentence');
  } else {
    t.fail(`resolved or failed otherwise: ${out instanceof Error ? out.message : JSON.stringify(out)}`);
  }
  const next = await inspectCapture(good.path, OPTS);
  t.deepEqual(next.tables.map((x) => x.rows), DEFAULT_CAPTURE_TABLES.map((x) => x.rows), 'the next good capture is still inspected');
}

test('not SQLite: random bytes, a text file, an empty file', async (t) => {
  const d = await mkdtemp(path.join(dir, 'notsqlite-'));
  await makeHostileCapture(path.join(d, 'random.db'), 'random_bytes');
  await expectRejected(t, path.join(d, 'random.db'), 'not_sqlite', /not a SQLite database/);
  await makeHostileCapture(path.join(d, 'upload.csv'), 'text');
  await expectRejected(t, path.join(d, 'upload.csv'), 'not_sqlite', /not a SQLite database/);
  await writeFile(path.join(d, 'empty.db'), '');
  await expectRejected(t, path.join(d, 'empty.db'), 'truncated', /empty/);
});

test('truncated: cut in half (whole pages), cut mid-page, header only', async (t) => {
  const d = await mkdtemp(path.join(dir, 'trunc-'));
  const src = (await makeCapture(path.join(d, 'src.db'))).path;
  const half = await truncateCopy(src, path.join(d, 'half.db'));
  t.equal(half % 4096, 0, 'the half keeps whole pages (only the header page count reveals it)');
  await expectRejected(t, path.join(d, 'half.db'), 'truncated', /header says \d+ pages but the file holds \d+/);
  await truncateCopy(src, path.join(d, 'odd.db'), 10_000);
  await expectRejected(t, path.join(d, 'odd.db'), 'truncated', /not a whole number of 4096-byte pages/);
  await truncateCopy(src, path.join(d, 'header.db'), 60);
  await expectRejected(t, path.join(d, 'header.db'), 'truncated', /shorter than the 100-byte SQLite header/);
});

test('corrupt pages: a damaged table b-tree page fails quick_check', async (t) => {
  const d = await mkdtemp(path.join(dir, 'corrupt-'));
  const cap = await makeCapture(path.join(d, 'corrupt.db'));
  const page = await corruptPage(cap.path);
  t.ok(page > 1, `page ${page} overwritten`);
  await expectRejected(t, cap.path, 'corrupt', /quick_check reports .*[Pp]age/);
  // Damage to the schema page itself: SQLite cannot even load the schema.
  const cap2 = await makeCapture(path.join(d, 'schema.db'));
  await corruptPage(cap2.path, 1);
  await expectRejected(t, cap2.path, 'corrupt', /corrupt|malformed/i);
});

const schemaCases: [HostileKind, RegExp][] = [
  ['trigger', /trigger "bump" is not allowed/],
  ['view_functions', /view "noise" is not allowed/],
  ['fts5', /virtual table "notes" is not allowed/],
  ['check_function', /table "checked" calls the function "length\(\)"/],
  ['default_function', /table "defaulted" calls the function "randomblob\(\)"/],
  ['generated_column', /table "computed" has a generated column "b"/],
  ['expression_index', /index "by_upper" calls the function "upper\(\)"/],
  ['custom_collation', /index "by_v" uses collation "rigcoll"/],
];

for (const [kind, message] of schemaCases) {
  test(`unsupported schema: ${kind}`, async (t) => {
    const d = await mkdtemp(path.join(dir, `${kind}-`));
    await makeHostileCapture(path.join(d, `${kind}.db`), kind);
    await expectRejected(t, path.join(d, `${kind}.db`), 'unsupported_schema', message);
  });
}

test('a trigger disguised as a table in sqlite_schema is refused', async (t) => {
  const d = await mkdtemp(path.join(dir, 'forged-'));
  await makeHostileCapture(path.join(d, 'forged.db'), 'forged_trigger_type');
  // SQLite itself refuses to load a schema whose row type contradicts its SQL.
  await expectRejected(t, path.join(d, 'forged.db'), 'corrupt', /malformed database schema \(sneaky\)/);
});

test('huge row: a 20 MiB blob is rejected as row_too_large without loading it', async (t) => {
  const d = await mkdtemp(path.join(dir, 'huge-'));
  const cap = await makeHugeRowCapture(path.join(d, 'huge.db'), 20 * 1024 * 1024);
  t.ok(cap.sizeBytes > 20 * 1024 * 1024, 'the file holds the blob');
  await expectRejected(t, cap.path, 'row_too_large', /value of 20971520 bytes in column "data" of table "blobs", larger than the limit of 16777216 bytes/);
  const rssBefore = process.memoryUsage().rss;
  let childRss = 0;
  const err = await rejection(inspectCapture(cap.path, { ...OPTS, onStats: (s) => (childRss = s.maxRssKb) }));
  const grown = process.memoryUsage().rss - rssBefore;
  t.equal((err as CaptureRejected).reason, 'row_too_large', 'rejected again');
  t.ok(grown < 4 * 1024 * 1024, `rigd's RSS did not grow with the blob (${Math.round(grown / 1024)} KiB; child peak ${childRss} KiB)`);
});

test('huge row: a 40 MiB value is measured, not loaded (SQLite capped at 32 MiB still accepts it under a higher limit)', async (t) => {
  const d = await mkdtemp(path.join(dir, 'huge40-'));
  const cap = await makeHugeRowCapture(path.join(d, 'huge40.db'), 40 * 1024 * 1024);
  // memoryLimitMb caps SQLite's heap (hard_heap_limit) as well as V8's: reading the 40 MiB value
  // would fail with resource_limit. The reader takes its length from the record header instead.
  const info = await inspectCapture(cap.path, { ...OPTS, memoryLimitMb: 32, maxValueBytes: 64 * 1024 * 1024 });
  t.deepEqual(info.tables.map((x) => [x.name, x.rows]), [['readings', 10], ['blobs', 1]], 'accepted under a 64 MiB value limit');
  const err = await rejection(inspectCapture(cap.path, { ...OPTS, memoryLimitMb: 32 }));
  t.equal((err as CaptureRejected).reason, 'row_too_large', 'and refused under the default 16 MiB limit');
});

test('rows and value bounds from the pages: WITHOUT ROWID tables deep enough to have interior cells, an empty table, a row longer than the value limit whose values fit', async (t) => {
  const d = await mkdtemp(path.join(dir, 'pages-'));
  const max = 64 * 1024;
  const cap = await sqlCapture(
    path.join(d, 'pages.sqlite'),
    'CREATE TABLE kv (k TEXT, n INTEGER, v BLOB, PRIMARY KEY (k, n)) WITHOUT ROWID',
    "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 20000) INSERT INTO kv SELECT 'key-' || (i % 13), i, randomblob(40) FROM s",
    'CREATE TABLE r (id INTEGER PRIMARY KEY, x TEXT)',
    "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 30000) INSERT INTO r SELECT i * 3, 'x' || i FROM s",
    'DELETE FROM r WHERE id % 7 = 0',
    'CREATE TABLE empty (a, b)',
    'CREATE TABLE wide (a BLOB, b BLOB)',
    `INSERT INTO wide VALUES (randomblob(${max}), randomblob(${max})), (NULL, randomblob(${max - 1}))`,
  );
  const info = await inspectCapture(cap.path, { ...OPTS, maxValueBytes: max });
  t.deepEqual(
    info.tables.map((x) => [x.name, x.rows]),
    [['kv', 20000], ['r', 30000 - Math.floor(30000 / 7)], ['empty', 0], ['wide', 2]],
    'exact row counts (interior cells of a WITHOUT ROWID table are rows; deleted rows are not), two values of the limit in one row accepted',
  );
  const over = await rejection(inspectCapture(cap.path, { ...OPTS, maxValueBytes: max - 1 }));
  t.ok(over instanceof CaptureRejected && over.reason === 'row_too_large', `one byte less: row_too_large (${over?.message})`);
  t.match(over?.message ?? '', new RegExp(`value of ${max} bytes in column "a" of table "wide"`), 'names the value, its column and table');
});

test('larger than maxBytes: too_large before any child is started', async (t) => {
  let forked = false;
  const err = await rejection(inspectCapture(good.path, { ...OPTS, maxBytes: good.sizeBytes - 1, onChild: () => (forked = true) }));
  t.ok(err instanceof CaptureRejected && err.reason === 'too_large', `too_large (${err?.message})`);
  t.match(err?.message ?? '', new RegExp(`${good.sizeBytes} bytes, larger than the limit of ${good.sizeBytes - 1} bytes`), 'says both sizes');
  t.notOk(forked, 'no child process');
  const ok = await inspectCapture(good.path, { ...OPTS, maxBytes: good.sizeBytes });
  t.equal(ok.sizeBytes, good.sizeBytes, 'exactly maxBytes is accepted');
});

test('timeout: a tiny time budget kills the child and rejects with timeout', async (t) => {
  let pid = 0;
  const started = Date.now();
  const err = await rejection(inspectCapture(good.path, { ...OPTS, timeoutMs: 1, onChild: (p) => (pid = p) }));
  t.ok(err instanceof CaptureRejected && err.reason === 'timeout', `timeout (${err?.message})`);
  t.match(err?.message ?? '', /did not finish within 1 ms/, 'message names the budget');
  t.ok(pid > 0 && !alive(pid), `child ${pid} is gone when the promise settles`);
  t.ok(Date.now() - started < 10_000, `rejected promptly (${Date.now() - started} ms: a busy machine starts a process slowly)`);
  const next = await inspectCapture(good.path, OPTS);
  t.equal(next.tables.length, DEFAULT_CAPTURE_TABLES.length, 'the next capture is inspected');
});

/** A capture big enough that the child is still reading it when the test interferes. */
async function mediumCapture(): Promise<MadeCapture> {
  const d = await mkdtemp(path.join(dir, 'medium-'));
  return makeCapture(path.join(d, 'medium.db'), {
    tables: [
      { name: 'a', columns: [{ name: 'id', type: 'INTEGER' }, { name: 's', type: 'TEXT' }, { name: 'v', type: 'REAL' }], rows: 400_000 },
      { name: 'b', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'p', type: 'BLOB' }], rows: 150_000 },
    ],
  });
}

test('timeout: a child hung in the middle of quick_check is killed with SIGKILL', async (t) => {
  // The budget counts from the spawn: long enough for a loaded machine to start the child and reach
  // quick_check within it (the child took 3 s to start at a load of 37).
  const budgetMs = 20_000;
  const cap = await mediumCapture();
  let pid = 0;
  const steps: string[] = [];
  const started = Date.now();
  // The child stops itself as it enters quick_check (stands in for a file that makes SQLite spin).
  const err = await withChildStoppedAtStep('quick_check', () =>
    rejection(
      inspectCapture(cap.path, {
        ...OPTS,
        timeoutMs: budgetMs,
        onChild: (p) => (pid = p),
        onStep: (s) => {
          steps.push(s);
        },
      }),
    ),
  );
  t.ok(steps.includes('quick_check') && !steps.includes('tables'), `stopped inside the SQLite work (${steps.join(',')})`);
  t.ok(err instanceof CaptureRejected && err.reason === 'timeout', `timeout (${err?.message})`);
  // Not before the budget; after it, as soon as the kill is seen (the slack is a busy machine's).
  const took = Date.now() - started;
  t.ok(took >= budgetMs - 100 && took < budgetMs + 30_000, `after the budget, not before (${took} ms)`);
  t.ok(pid > 0 && !alive(pid), `child ${pid} is gone`);
  const info = await inspectCapture(cap.path, OPTS);
  t.deepEqual(info.tables.map((x) => x.rows), [400_000, 150_000], 'the same file inspects fine with time to spare');
});

test('a child that dies mid-inspection (e.g. killed by a memory cap) rejects with inspector_crashed', async (t) => {
  const cap = await mediumCapture();
  let pid = 0;
  let cmdline = '';
  // The child stops itself as it enters quick_check, where the kill finds it.
  const err = await withChildStoppedAtStep('quick_check', () =>
    rejection(
      inspectCapture(cap.path, {
        ...OPTS,
        memoryLimitMb: 48,
        onChild: (p) => (pid = p),
        onStep: (s) => {
          if (s === 'started') cmdline = String(readFileSyncSafe(`/proc/${pid}/cmdline`)).split('\0').join(' ');
          if (s === 'quick_check') process.kill(pid, 'SIGKILL');
        },
      }),
    ),
  );
  t.match(cmdline, /--max-old-space-size=48\b/, `the child runs with the heap cap (${cmdline.slice(0, 120)})`);
  t.ok(err instanceof CaptureRejected && err.reason === 'inspector_crashed', `inspector_crashed (${err?.message})`);
  t.match(err?.message ?? '', /killed by SIGKILL before answering/, 'says what happened');
  t.ok(!alive(pid), 'child is gone');
  const next = await inspectCapture(good.path, OPTS);
  t.equal(next.tables.length, DEFAULT_CAPTURE_TABLES.length, 'the next capture is inspected');
});

test('abort: the signal kills the child and rejects with AbortError', async (t) => {
  const ac = new AbortController();
  let pid = 0;
  const err = await rejection(
    inspectCapture(good.path, { ...OPTS, signal: ac.signal, onChild: (p) => (pid = p), onStep: (s) => s === 'started' && ac.abort() }),
  );
  t.ok(err && !(err instanceof CaptureRejected) && err.name === 'AbortError', `AbortError, not a rejection of the file (${err?.name})`);
  t.ok(pid > 0 && !alive(pid), 'child is gone');
});

test('a missing file is an ordinary error (retryable), not a rejection', async (t) => {
  const err = await rejection(inspectCapture(path.join(dir, 'nope.db'), OPTS));
  t.ok(err && !(err instanceof CaptureRejected) && (err as NodeJS.ErrnoException).code === 'ENOENT', 'ENOENT');
});

test('capture files with tricky names are opened as given (URI escaping)', async (t) => {
  const d = await mkdtemp(path.join(dir, 'names-'));
  const file = path.join(d, 'rig 7?#%25 capture.db');
  await copyFile(good.path, file);
  const info = await inspectUnchanged(t, file);
  if (info instanceof Error) throw info;
  t.equal(info.tables.length, DEFAULT_CAPTURE_TABLES.length, 'read the right file');
});

function readFileSyncSafe(p: string): string {
  try {
    return readFileSync(p, 'latin1');
  } catch {
    return '';
  }
}
