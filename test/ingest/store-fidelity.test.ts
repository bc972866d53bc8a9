// The capture store keeps every value exactly as its capture held it (storage class and bytes),
// whatever other captures brought before or after, on both engines: captures of two rigs whose
// software declares the same table differently (leading zeros, numeric-looking text, blobs that look
// like text, reals that look like integers, integers past 2^53), and names that differ only in
// non-ASCII case. Captures are made with the sqlite3 module; imports run the real sandboxed child.
import path from 'node:path';
import test from 'tape';
import type { CaptureStoreWriter } from '../../src/db/capture-store/index.ts';
import { importCapture, type ImportOptions } from '../../src/ingest/import.ts';
import { openTestReader, openTestStore, sqlCapture, storeQuery } from '../helpers/capture-store.ts';
import { onPostgres } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { captureCanon, located, storeCanon } from './store-values.ts';

const dir = tmpDir('rigd-store-fidelity-');
const dataDir = path.join(dir, 'data');
const OPTS: ImportOptions = { maxBytes: 50 * 1024 * 1024, timeoutMs: 60_000 };
let store: CaptureStoreWriter;

const COLS = ['serial', 'code', 'raw', 'note', 'x', 'big'];

/** Rig A's software declares types that convert: NUMERIC, INTEGER, REAL. */
const rigA = () =>
  sqlCapture(
    path.join(dir, 'rig-a.sqlite'),
    'CREATE TABLE readings (serial NUMERIC, code INTEGER, raw BLOB, note TEXT, x REAL, big INTEGER)',
    "INSERT INTO readings VALUES ('12', '7', x'3132', 'hello', 1, 9007199254740993)",
    "INSERT INTO readings VALUES (12.5, 8, NULL, 'wörld ✓', 2.5, -9223372036854775808)",
  );

/** Rig B's software (another version) sends the same table name with other types and values. */
const rigB = () =>
  sqlCapture(
    path.join(dir, 'rig-b.sqlite'),
    'CREATE TABLE readings (serial TEXT, code TEXT, raw TEXT, note BLOB, x, big TEXT)',
    "INSERT INTO readings VALUES ('0012', '007', '12', x'68656c6c6f', 1.0, '9007199254740993')",
    "INSERT INTO readings VALUES ('12.50', '1e3', 'x''00''', x'00ff', 1e300, ' 42')",
    "INSERT INTO readings VALUES (NULL, '', x'', '', 0.1, '-0')",
    "INSERT INTO readings VALUES ('  7', '0x10', 'NULL', x'3132', -2.0, '12345678901234567890')",
  );

/** Rig C: columns and tables whose names differ only in non-ASCII case (and one in ASCII case). */
const rigC = () =>
  sqlCapture(
    path.join(dir, 'rig-c.sqlite'),
    'CREATE TABLE "État" ("Kind" TEXT, "\u212Aind" TEXT, "ÉTAT" INTEGER)',
    "INSERT INTO \"État\" VALUES ('ascii K', 'kelvin K', 1)",
    'CREATE TABLE "état" ("kind" TEXT, "état" TEXT)',
    "INSERT INTO \"état\" VALUES ('lower', 'é')",
  );

/** Rig D: the same table names again, another column set. */
const rigD = () =>
  sqlCapture(
    path.join(dir, 'rig-d.sqlite'),
    'CREATE TABLE "État" ("kind" BLOB, "\u212Aind" BLOB, "ÉTAT" TEXT, "étaT" TEXT)',
    "INSERT INTO \"État\" VALUES (x'01', x'02', 'upper É', 'lower é')",
  );

test('type conflicts between two rigs: each capture comes back exactly, class and bytes, whatever came before or after', async (t) => {
  store = await openTestStore(dataDir);
  const a = await rigA();
  const b = await rigB();
  const wantA = await captureCanon(a.path, 'readings', COLS);
  const wantB = await captureCanon(b.path, 'readings', COLS);
  t.deepEqual(wantB[0]!.slice(0, 3), [['text', '0012'], ['text', '007'], ['text', '12']], 'rig B holds text with leading zeros (the premise)');
  await importCapture(a.path, 1, store, OPTS);
  await importCapture(b.path, 2, store, OPTS);
  // A again after B: the order must not matter either.
  await importCapture(a.path, 3, store, OPTS);
  t.deepEqual(await storeCanon(dataDir, 1, 'readings', COLS), wantA, 'rig A (first): every value, class and bytes');
  t.deepEqual(await storeCanon(dataDir, 2, 'readings', COLS), wantB, "rig B (after A): '0012', '007', '12.50', blobs that look like text, reals that look like integers");
  t.deepEqual(await storeCanon(dataDir, 3, 'readings', COLS), wantA, 'rig A again (after B): the same');
  t.equal((await located(dataDir, 2, 'readings')).physical, (await located(dataDir, 1, 'readings')).physical, 'one shared table: query across captures of the same shape still works');

  // What export and the tables API read: the reader gives the capture's values back as they were.
  const reader = (await openTestReader(dataDir))!;
  const rowsOf = async (id: number) => {
    const out = [];
    for await (const r of reader.rows('readings', COLS, id)) out.push(r);
    return out;
  };
  const gotB = await rowsOf(2);
  t.deepEqual(gotB[0], ['0012', '007', '12', Buffer.from('hello'), 1, '9007199254740993'], 'rig B row 1 through the reader: text stays text, the blob stays a blob');
  t.deepEqual(gotB[1]!.slice(0, 2), ['12.50', '1e3'], "numeric-looking text is not turned into numbers ('12.50', '1e3')");
  const gotA = await rowsOf(1);
  t.deepEqual(gotA[0], [12, 7, Buffer.from('12'), 'hello', 1, '9007199254740993'], 'rig A row 1: its own conversions (NUMERIC 12, INTEGER 7), the integer past 2^53 exact');
  t.deepEqual(gotA[1]![5], '-9223372036854775808', 'the smallest 64-bit integer exact');
  await reader.close();
});

test('a repeat and a replace of one capture leave the other capture exact', async (t) => {
  const b = path.join(dir, 'rig-b.sqlite');
  const wantA = await captureCanon(path.join(dir, 'rig-a.sqlite'), 'readings', COLS);
  await importCapture(b, 1, store, OPTS); // capture 1 now holds rig B's file
  t.deepEqual(await storeCanon(dataDir, 1, 'readings', COLS), await captureCanon(b, 'readings', COLS), 'capture 1 replaced by the other file, exact');
  t.deepEqual(await storeCanon(dataDir, 3, 'readings', COLS), wantA, 'capture 3 untouched');
});

test('names that differ only in non-ASCII case are different names; ASCII case as the engine compares it', async (t) => {
  const c = await rigC();
  const d = await rigD();
  await importCapture(c.path, 10, store, OPTS);
  await importCapture(d.path, 11, store, OPTS);
  await importCapture(c.path, 12, store, OPTS);
  for (const [id, file] of [[10, c.path], [12, c.path]] as const) {
    t.deepEqual(await storeCanon(dataDir, id, 'État', ['Kind', '\u212Aind', 'ÉTAT']), await captureCanon(file, 'État', ['Kind', '\u212Aind', 'ÉTAT']), `capture ${id}: "Kind" and "\u212Aind" (Kelvin sign) are two columns`);
    t.deepEqual(await storeCanon(dataDir, id, 'état', ['kind', 'état']), await captureCanon(file, 'état', ['kind', 'état']), `capture ${id}: table "état" apart from "État"`);
  }
  t.deepEqual(await storeCanon(dataDir, 11, 'État', ['kind', '\u212Aind', 'ÉTAT', 'étaT']), await captureCanon(d.path, 'État', ['kind', '\u212Aind', 'ÉTAT', 'étaT']), 'capture 11: blobs in columns another capture typed TEXT stay blobs');
  t.notEqual((await located(dataDir, 10, 'État')).physical, (await located(dataDir, 10, 'état')).physical, '"État" and "état" are two store tables');
  const cols = (await located(dataDir, 11, 'État')).columns.map((x) => x.store);
  if (onPostgres) t.deepEqual(cols, ['kind', '\u212Aind', 'ÉTAT', 'étaT'], 'PostgreSQL: quoted names exact, each its own column');
  else t.deepEqual(cols, ['Kind', '\u212Aind', 'ÉTAT', 'étaT'], 'SQLite: "kind" is "Kind" (ASCII case folds); "ÉTAT" and "étaT" (É and é) are two columns');
  const failed = await storeQuery<{ n: number }>(dataDir, 'SELECT count(*) AS n FROM rigd_capture_tables WHERE capture_id IN (10, 11, 12)');
  t.equal(Number(failed[0]!.n), 5, 'every table of the three captures recorded');
});

test('close', async (t) => {
  await store.close();
  t.pass('closed');
});
