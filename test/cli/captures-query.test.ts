// rigd captures query "SQL" as a child process over a real capture store. The store is opened
// read-only: every kind of write (INSERT, UPDATE, DELETE, CREATE, DROP, ATTACH, VACUUM, PRAGMA
// writes) is refused by SQLite with one line and exit 1, and the store's bytes and row counts are
// the same before and after; both when the store is at rest (no -wal) and while a writer holds it
// open in WAL mode (its uncheckpointed rows are visible). Output shapes: a table, --json an array of
// objects, --csv; --limit says when rows were cut; --timeout interrupts a runaway query; a missing
// store says so.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import test from 'tape';
import sqlite3 from 'sqlite3';
import { captureStorePath } from '../../src/db/capture-store/layout.ts';
import { openApp } from '../../src/services/app.ts';
import { rigd } from '../helpers/cli.ts';
import { seedCapture } from '../helpers/seed-capture.ts';
import { testConfig } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { onPostgres, sqliteOnly } from '../helpers/dialect.ts';

const dataDir = tmpDir();
const files = tmpDir();
const env = { RIGD_DATA_DIR: dataDir };
const store = captureStorePath(dataDir);
let id = 0;

const WRITES = [
  'INSERT INTO frames (capture_id, ts) VALUES (99, 1)',
  'UPDATE frames SET note = 1',
  'DELETE FROM frames',
  'CREATE TABLE evil (a)',
  'CREATE INDEX evil_i ON frames (note)',
  'DROP TABLE frames',
  'ALTER TABLE frames ADD COLUMN evil',
  "ATTACH '/tmp/rigd-evil.sqlite' AS evil",
  'VACUUM',
  "VACUUM INTO '/tmp/rigd-evil-copy.sqlite'",
  'PRAGMA user_version = 7',
  'ANALYZE',
  'REPLACE INTO frames (capture_id) VALUES (5)',
];

/** PostgreSQL: the writes a READ ONLY transaction refuses (the store schema is the search path). */
// Capture columns are jsonb on PostgreSQL: the literals are untyped, so each statement is a valid write
// that only the read-only transaction refuses.
const PG_WRITES = [
  "INSERT INTO frames (capture_id, ts) VALUES (99, '1')",
  "UPDATE frames SET note = '1'",
  'DELETE FROM frames',
  'CREATE TABLE evil (a int)',
  'CREATE INDEX evil_i ON frames (note)',
  'DROP TABLE frames',
  'ALTER TABLE frames ADD COLUMN evil int',
  'TRUNCATE frames',
  'SELECT nextval(\'evil\')',
  'WITH d AS (DELETE FROM frames RETURNING 1) SELECT count(*) FROM d',
];

/** The store's bytes (with its -wal) and each table's row count; on PostgreSQL the row count and the schema's objects. */
async function snapshot(): Promise<string> {
  if (onPostgres) {
    const counts = await rigd(['captures', 'query', "SELECT (SELECT count(*) FROM frames) AS frames, (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'rigd_captures') AS objects", '--json'], { env });
    return counts.stdout.replace(/\s+/g, '');
  }
  const hash = createHash('sha256').update(readFileSync(store));
  if (existsSync(`${store}-wal`)) hash.update(readFileSync(`${store}-wal`));
  const counts = await rigd(['captures', 'query', "SELECT (SELECT count(*) FROM frames) AS frames, (SELECT count(*) FROM sqlite_master) AS objects", '--json'], { env });
  return `${hash.digest('hex')} ${counts.stdout.replace(/\s+/g, '')}`;
}

function openWriter(): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(store, (err) => (err ? reject(err) : resolve(db)));
  });
}
function exec(db: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
}

test('no store yet: says so, exit 1', async (t) => {
  const fresh = await rigd(['captures', 'query', 'SELECT 1'], { env: { RIGD_DATA_DIR: tmpDir() } });
  t.deepEqual([fresh.code, fresh.stdout, fresh.stderr], [1, '', 'rigd: there is no capture store yet: no capture has been imported\n']);
});

test('setup: an imported capture', async (t) => {
  const app = await openApp(testConfig({ data_dir: dataDir }));
  await app.start();
  id = await seedCapture(app, files, 'rig1/q.sqlite', [
    {
      name: 'frames',
      columns: [
        { name: 'ts', type: 'INTEGER' },
        { name: 'note', type: 'TEXT' },
        { name: 'img', type: 'BLOB' },
      ],
      rows: [
        [1, 'a, "b"', Buffer.from([1, 2, 3])],
        [2, null, null],
        [3, 'c', null],
      ],
    },
  ]);
  await app.close();
  if (onPostgres) {
    const r = await rigd(['captures', 'query', 'SELECT count(*) AS n FROM frames', '--json'], { env });
    t.deepEqual(JSON.parse(r.stdout), [{ n: 3 }], 'the store schema holds the rows');
    return;
  }
  t.ok(existsSync(store) && !existsSync(`${store}-wal`), 'the store at rest: no -wal');
});

test('at rest: every write is refused by SQLite (exit 1, one line) and the store is unchanged', async (t) => {
  const before = await snapshot();
  for (const sql of onPostgres ? PG_WRITES : WRITES) {
    const r = await rigd(['captures', 'query', sql], { env });
    t.equal(r.code, 1, `${sql}: exit 1`);
    if (onPostgres && sql.includes('DELETE FROM frames RETURNING')) {
      t.match(r.stderr, /^rigd: query (refused|failed): [^\n]+\n$/, `${sql}: one line saying why (${r.stderr.trim()})`);
      continue;
    }
    if (onPostgres && sql.startsWith('SELECT nextval')) {
      t.match(r.stderr, /^rigd: query (refused|failed): [^\n]+\n$/, `${sql}: one line saying why (${r.stderr.trim()})`);
      continue;
    }
    t.match(r.stderr, /^rigd: query refused: the capture store is opened read-only \([^\n]+\)\n$/, `${sql}: one line saying why`);
  }
  if (onPostgres) {
    const several = await rigd(['captures', 'query', 'SELECT 1; DELETE FROM frames'], { env });
    t.deepEqual([several.code, several.stderr], [2, 'rigd: one statement at a time: the query has more than one\n'], 'a second statement is refused, not ignored');
    const mode = await rigd(['captures', 'query', 'SET TRANSACTION READ WRITE'], { env });
    t.equal(mode.code, 1, `the transaction cannot be made read-write: ${mode.stderr.trim()}`);
    t.equal(await snapshot(), before, 'same row counts and schema objects');
    return;
  }
  const undo = await rigd(['captures', 'query', 'PRAGMA query_only = OFF'], { env });
  t.equal(undo.code, 0, 'turning query_only off is allowed...');
  const after = await rigd(['captures', 'query', 'DELETE FROM frames'], { env });
  t.equal(after.code, 1, '...and changes nothing: the connection itself is read-only');
  const several = await rigd(['captures', 'query', 'SELECT 1; DELETE FROM frames'], { env });
  t.deepEqual([several.code, several.stderr], [2, 'rigd: one statement at a time: the query has more than one\n'], 'a second statement is refused, not ignored');
  t.equal(await snapshot(), before, 'same bytes and row counts');
  t.notOk(existsSync(`${store}-wal`) || existsSync(`${store}-shm`), 'no -wal or -shm created');
  t.notOk(existsSync('/tmp/rigd-evil.sqlite') || existsSync('/tmp/rigd-evil-copy.sqlite'), 'no file written elsewhere');
});

test('while a writer holds the store in WAL mode: its new rows are read, writes still refused, nothing changes', async (t) => {
  if (sqliteOnly(t, 'WAL and the store file')) return;
  const writer = await openWriter();
  try {
    await exec(writer, "PRAGMA wal_autocheckpoint = 0; INSERT INTO frames (capture_id, ts, note) VALUES (424242, 4, 'from the writer')");
    t.ok(existsSync(`${store}-wal`), 'a -wal holds the new row');
    const seen = await rigd(['captures', 'query', 'SELECT note FROM frames WHERE capture_id = 424242', '--json'], { env });
    t.deepEqual(JSON.parse(seen.stdout), [{ note: 'from the writer' }], 'the row only in the -wal is visible');
    const before = await snapshot();
    for (const sql of [...WRITES, 'PRAGMA journal_mode = DELETE', 'PRAGMA wal_checkpoint(TRUNCATE)']) {
      const r = await rigd(['captures', 'query', sql], { env });
      if (sql.startsWith('PRAGMA wal_checkpoint')) continue; // a read-only checkpoint does nothing (it reports -1)
      t.equal(r.code, 1, `${sql}: exit 1`);
      t.equal(r.stderr.split('\n').length, 2, `${sql}: one line`);
    }
    t.equal(await snapshot(), before, 'same bytes (main file and -wal) and row counts');
  } finally {
    await new Promise((resolve) => writer.close(resolve));
  }
});

test('output: a table, --json an array of objects, --csv with a header; blobs', async (t) => {
  const sql = `SELECT ts, note, img FROM frames WHERE capture_id = ${id} ORDER BY ts`;
  const table = await rigd(['captures', 'query', sql], { env });
  t.equal(table.code, 0, table.stderr);
  t.equal(table.stdout, 'ts  note    img\n1   a, "b"  <blob 3 bytes>\n2   NULL    NULL\n3   c       NULL\n');
  const json = await rigd(['captures', 'query', sql, '--json'], { env });
  t.deepEqual(JSON.parse(json.stdout), [
    { ts: 1, note: 'a, "b"', img: 'AQID' },
    { ts: 2, note: null, img: null },
    { ts: 3, note: 'c', img: null },
  ], '--json: objects, blobs as base64');
  const csv = await rigd(['captures', 'query', sql, '--csv'], { env });
  t.equal(csv.stdout, 'ts,note,img\r\n1,"a, ""b""",AQID\r\n2,,\r\n3,c,\r\n', '--csv');
  const none = await rigd(['captures', 'query', 'SELECT * FROM frames WHERE 1 = 0', '--json'], { env });
  t.deepEqual([none.code, JSON.parse(none.stdout)], [0, []], 'no rows: []');
  const escaped = await rigd(['captures', 'query', `SELECT ${onPostgres ? 'chr' : 'char'}(27) || '[31mred' AS x`], { env });
  t.equal(escaped.stdout, 'x\n\\x1b[31mred\n', 'terminal escapes in values are shown escaped');
});

test('bounds: --limit cuts and says so; --timeout interrupts; bad flags are usage errors', async (t) => {
  const cut = await rigd(['captures', 'query', 'SELECT ts FROM frames ORDER BY ts', '--limit', '2', '--json'], { env });
  t.deepEqual([cut.code, JSON.parse(cut.stdout).length], [0, 2]);
  t.equal(cut.stderr, 'rigd: only the first 2 rows are shown (--limit)\n');
  const exact = await rigd(['captures', 'query', `SELECT ts FROM frames WHERE capture_id = ${id}`, '--limit', '3'], { env });
  t.equal(exact.stderr, '', 'exactly the limit: nothing cut, nothing said');
  const runaway = 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n';
  const stopped = await rigd(['captures', 'query', runaway, '--timeout', '1'], { env, timeoutMs: 60_000 });
  t.deepEqual([stopped.code, stopped.stderr], [1, 'rigd: query stopped after 1 s (raise --timeout)\n']);
  const both = await rigd(['captures', 'query', 'SELECT 1', '--json', '--csv'], { env });
  t.equal(both.code, 2);
  const zero = await rigd(['captures', 'query', 'SELECT 1', '--limit', '0'], { env });
  t.deepEqual([zero.code, zero.stderr], [2, 'rigd: --limit must be an integer from 1 to 1000000, got "0"\n']);
  const syntax = await rigd(['captures', 'query', 'SELEC 1'], { env });
  t.deepEqual([syntax.code, syntax.stderr], [1, onPostgres ? 'rigd: query failed: syntax error at or near "SELEC"\n' : 'rigd: query failed: near "SELEC": syntax error\n']);
  const empty = await rigd(['captures', 'query', ' ; -- nothing'], { env });
  t.equal(empty.code, 2);
});
