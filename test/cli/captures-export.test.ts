// rigd captures export ID TABLE as a child process over a real capture store: CSV and NDJSON with
// blobs (base64), NULLs, quoting, exact big integers, and the capture's own columns in its order
// when the store table holds more (another capture's); only that capture's rows; -o FILE written
// whole with mode 0640; a closed pipe ends quietly; every refusal is one line with its exit code.
import { spawn } from 'node:child_process';
import { readFileSync, statSync, writeFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import sqlite3 from 'sqlite3';
import { captureStorePath } from '../../src/db/capture-store/layout.ts';
import { connectStore } from '../../src/db/capture-store/postgres-writer.ts';
import { databaseUrlFor, onPostgres } from '../helpers/dialect.ts';
import { openApp, type App } from '../../src/services/app.ts';
import { RIGD, rigd, rigdEnv } from '../helpers/cli.ts';
import { putFile, settled } from '../helpers/captures.ts';
import { seedCapture, writeCaptureFile, type SeedTable } from '../helpers/seed-capture.ts';
import { testConfig } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';

const dataDir = tmpDir();
const files = tmpDir();
const env = { RIGD_DATA_DIR: dataDir };
const BLOB = Buffer.from([0, 1, 2, 0xff, 0x22, 0x2c]);
const BIG = '9007199254740993'; // 2^53 + 1: not a JavaScript number

const frames: SeedTable = {
  name: 'frames',
  columns: [
    { name: 'ts', type: 'TEXT' },
    { name: 'value', type: 'REAL' },
    { name: 'img', type: 'BLOB' },
    { name: 'note', type: 'TEXT' },
    { name: 'n', type: 'INTEGER' },
  ],
  rows: [
    ['2026-11-23T08:00:00Z', 1.5, BLOB, 'plain', 1],
    ['2026-11-23T08:00:01Z', null, null, 'comma, "quote"\nline', null],
    ['2026-11-23T08:00:02Z', -0.25, Buffer.alloc(0), '', 42],
  ],
};
/** Another capture's frames: other columns, another order, one the first capture lacks. */
const otherFrames: SeedTable = {
  name: 'frames',
  columns: [
    { name: 'extra', type: 'INTEGER' },
    { name: 'note', type: 'TEXT' },
    { name: 'ts', type: 'TEXT' },
  ],
  rows: [[7, 'other capture', '2026-11-22T00:00:00Z']],
};

/** About 4 MB of CSV: far more than a pipe holds, and many pages of rows. */
const long: SeedTable = {
  name: 'long',
  columns: [{ name: 'i', type: 'INTEGER' }, { name: 'text', type: 'TEXT' }],
  rows: Array.from({ length: 40_000 }, (_, i) => [i, 'x'.repeat(100)]),
};

let app: App;
let first = 0;
let failed = 0;
let notImported = 0;

test('setup: two captures sharing a store table, one capture that failed', async (t) => {
  app = await openApp(testConfig({ data_dir: dataDir }));
  await app.start();
  const other = await seedCapture(app, files, 'rig1/other.sqlite', [otherFrames]);
  first = await seedCapture(app, files, 'rig1/first.sqlite', [frames, { name: 'Big', columns: [{ name: 'v', type: 'INTEGER' }], rows: [[BIG]] }, long]);
  t.ok(other < first, 'both imported');
  writeFileSync(path.join(files, 'junk.sqlite'), 'not a database at all, just text that is long enough to be refused'.repeat(4));
  await putFile(app, 'rig1/junk.sqlite', path.join(files, 'junk.sqlite'));
  const q = await app.captures.queueObject({ key: 'rig1/junk.sqlite', url: app.storage.objectUrl('rig1/junk.sqlite') });
  failed = (await settled(app, q.capture.id)).state === 'failed' ? q.capture.id : 0;
  t.ok(failed > 0, 'a failed capture');
  // Ingested, its tables recorded by the inspector, but its rows never written to the store.
  await writeCaptureFile(path.join(files, 'plain.sqlite'), [{ name: 'lonely', columns: [{ name: 'a', type: 'TEXT' }], rows: [['x']] }]);
  await putFile(app, 'rig1/plain.sqlite', path.join(files, 'plain.sqlite'));
  const p = await app.captures.queueObject({ key: 'rig1/plain.sqlite', url: app.storage.objectUrl('rig1/plain.sqlite') });
  notImported = (await settled(app, p.capture.id)).state === 'ingested' ? p.capture.id : 0;
  await app.close();
  // The store restored from a copy older than this capture: its table is gone.
  if (onPostgres) {
    const c = await connectStore(databaseUrlFor(dataDir));
    await c.query('DROP TABLE rigd_captures.lonely');
    await c.end();
  } else {
    const store = new sqlite3.Database(captureStorePath(dataDir));
    await new Promise<void>((resolve, reject) => store.exec('DROP TABLE lonely', (err) => (err ? reject(err) : resolve())));
    await new Promise<void>((resolve) => store.close(() => resolve()));
  }
  t.ok(notImported > 0, 'an ingested capture whose rows are not in the store');
});

test('CSV: header in the capture order, RFC 4180 quoting, NULL empty, blobs base64, only this capture', async (t) => {
  const r = await rigd(['captures', 'export', String(first), 'frames'], { env });
  t.equal(r.code, 0, `exit 0 ${r.stderr}`);
  t.equal(r.stderr, '');
  t.equal(
    r.stdout,
    'ts,value,img,note,n\r\n' +
      `2026-11-23T08:00:00Z,1.5,${BLOB.toString('base64')},plain,1\r\n` +
      '2026-11-23T08:00:01Z,,,"comma, ""quote""\nline",\r\n' +
      '2026-11-23T08:00:02Z,-0.25,,,42\r\n',
    'exactly the capture rows; the other capture and its column "extra" are not there',
  );
  const other = await rigd(['captures', 'export', String(first - 1), 'frames', '--format', 'csv'], { env });
  t.equal(other.stdout, 'extra,note,ts\r\n7,other capture,2026-11-22T00:00:00Z\r\n', "the other capture: its own columns in its own order");
  const big = await rigd(['captures', 'export', String(first), 'big'], { env });
  t.equal(big.stdout, `v\r\n${BIG}\r\n`, 'an integer past 2^53 is exact; the table name matches regardless of case');
});

test('NDJSON: one object per line, keys in the capture order, blobs as base64 strings, null', async (t) => {
  const r = await rigd(['captures', 'export', String(first), 'frames', '--format', 'ndjson'], { env });
  t.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  t.equal(lines.pop(), '', 'ends with a newline');
  const rows = lines.map((l) => JSON.parse(l));
  t.deepEqual(Object.keys(rows[0]), ['ts', 'value', 'img', 'note', 'n'], 'key order');
  t.deepEqual(rows, [
    { ts: '2026-11-23T08:00:00Z', value: 1.5, img: BLOB.toString('base64'), note: 'plain', n: 1 },
    { ts: '2026-11-23T08:00:01Z', value: null, img: null, note: 'comma, "quote"\nline', n: null },
    { ts: '2026-11-23T08:00:02Z', value: -0.25, img: '', note: '', n: 42 },
  ]);
  const big = await rigd(['captures', 'export', String(first), 'Big', '--format', 'ndjson'], { env });
  t.equal(big.stdout, `{"v":"${BIG}"}\n`, 'a big integer as a string of its digits');
});

test('-o FILE: the same bytes, mode 0640, no temp file left', async (t) => {
  const out = path.join(files, 'out', 'frames.csv');
  const dir = path.dirname(out);
  (await import('node:fs')).mkdirSync(dir);
  writeFileSync(out, 'old content');
  const r = await rigd(['captures', 'export', String(first), 'frames', '-o', out], { env });
  t.equal([r.code, r.stdout, r.stderr].join('|'), '0||', 'nothing on stdout or stderr');
  const stdout = await rigd(['captures', 'export', String(first), 'frames'], { env });
  t.equal(readFileSync(out, 'utf8'), stdout.stdout, 'the file has what stdout would have had (replacing the old file)');
  t.equal(statSync(out).mode & 0o777, 0o640, 'mode 0640');
  t.deepEqual(readdirSync(dir), ['frames.csv'], 'no temp file');
  const bad = await rigd(['captures', 'export', String(first), 'nope', '-o', path.join(dir, 'x.csv')], { env });
  t.equal(bad.code, 1);
  t.deepEqual(readdirSync(dir), ['frames.csv'], 'a refused export writes no file');
});

test('a long table: every row, in order, a page at a time', async (t) => {
  const r = await rigd(['captures', 'export', String(first), 'long'], { env });
  const lines = r.stdout.split('\r\n');
  t.equal(lines.length, 40_002, 'header, 40000 rows, the empty tail');
  t.ok(lines.slice(1, -1).every((l, i) => l === `${i},${'x'.repeat(100)}`), 'in insertion order, none lost or repeated across pages');
});

test('a closed pipe (| head -c 10) ends quietly', async (t) => {
  const child = spawn('sh', ['-c', `"${process.execPath}" "${RIGD}" captures export ${first} long | head -c 10`], { env: rigdEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise((resolve) => child.on('close', resolve));
  t.equal(stdout, 'i,text\r\n0,', 'head got its 10 bytes');
  t.equal(stderr, '', 'no error printed by rigd');
  t.equal(code, 0, 'the pipeline exits 0');
  const own = spawn(process.execPath, [RIGD, 'captures', 'export', String(first), 'long'], { env: rigdEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let ownErr = '';
  own.stderr.on('data', (d) => (ownErr += d));
  own.stdout.once('data', () => own.stdout.destroy());
  const ownCode = await new Promise((resolve) => own.on('close', resolve));
  t.deepEqual([ownCode, ownErr], [0, ''], 'rigd itself exits 0 with nothing on stderr when its reader goes away');
});

test('refusals: unknown capture, not ingested, no such table, bad format, bad id', async (t) => {
  const unknown = await rigd(['captures', 'export', '999', 'frames'], { env });
  t.deepEqual([unknown.code, unknown.stdout, unknown.stderr], [1, '', 'rigd: capture 999 not found\n']);
  const notIngested = await rigd(['captures', 'export', String(failed), 'frames'], { env });
  t.equal(notIngested.code, 1);
  t.match(notIngested.stderr, new RegExp(`^rigd: capture ${failed} failed \\(not_sqlite\\): .+; rigd ingest rig1/junk\\.sqlite queues it again\n$`));
  const noTable = await rigd(['captures', 'export', String(first), 'nope'], { env });
  t.equal(noTable.code, 1);
  t.equal(noTable.stderr, `rigd: capture ${first} has no table "nope" (its tables: frames, Big, long)\n`, 'lists the tables it has');
  const missing = await rigd(['captures', 'export', String(notImported), 'lonely'], { env });
  t.equal(missing.code, 1);
  t.match(missing.stderr, new RegExp(`^rigd: capture ${notImported}'s table lonely is not there in the capture store \\S+(capture-store\\.sqlite|#rigd_captures): it is not imported\n$`), 'a table the store lacks: one line');
  const format = await rigd(['captures', 'export', String(first), 'frames', '--format', 'xml'], { env });
  t.equal(format.code, 2);
  t.equal(format.stderr, 'rigd: --format must be one of csv, ndjson, got "xml"\n');
  const id = await rigd(['captures', 'export', 'abc', 'frames'], { env });
  t.equal(id.code, 2);
  t.equal(id.stderr, 'rigd: capture id must be a positive integer, got "abc"\n');
});

test('-o into a directory that does not exist, or onto a directory: one line naming it, nothing written', async (t) => {
  const cases: [string, string, RegExp][] = [
    ['a missing directory', path.join(files, 'no', 'such', 'x.csv'), new RegExp(`^rigd: -o: directory ${files}/no/such does not exist: create it or choose another place\\n$`)],
    ['a directory', files, new RegExp(`^rigd: -o: ${files} is a directory: name a file in it\\n$`)],
  ];
  for (const [what, target, expected] of cases) {
    const before = readdirSync(files).sort();
    const r = await rigd(['captures', 'export', String(first), 'frames', '-o', target], { env });
    t.equal(r.code, 2, `${what}: exit 2`);
    t.match(r.stderr, expected, `${what}: one line naming it (${r.stderr.trim()})`);
    t.deepEqual(readdirSync(files).sort(), before, `${what}: no file written, no temp file left`);
  }
});
