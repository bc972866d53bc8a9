// A capture whose values are as large as the inspector allows (maxValueBytes) imports whole on both
// engines, several such values in one row too (the store's row, capture_id and every value, is one
// record longer than any one value); a value one byte larger is refused as row_too_large with nothing
// stored. Captures are made with the sqlite3 module; imports run the real sandboxed child.
import path from 'node:path';
import test from 'tape';
import type { CaptureStoreWriter } from '../../src/db/capture-store/index.ts';
import { CaptureRejected } from '../../src/ingest/capture-file.ts';
import { importCapture, type ImportOptions } from '../../src/ingest/import.ts';
import { openTestStore, sqlCapture, storeQuery } from '../helpers/capture-store.ts';
import { onPostgres } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { located } from './store-values.ts';

const dir = tmpDir('rigd-store-value-limit-');
const dataDir = path.join(dir, 'data');
const MAX = 1024 * 1024;
const OPTS: ImportOptions = { maxBytes: 50 * 1024 * 1024, timeoutMs: 60_000, maxValueBytes: MAX };
let store: CaptureStoreWriter;

test('values of exactly maxValueBytes import whole, two in one row too', async (t) => {
  store = await openTestStore(dataDir);
  const cap = await sqlCapture(
    path.join(dir, 'full.sqlite'),
    'CREATE TABLE frames (i INTEGER, img BLOB, raw BLOB)',
    `INSERT INTO frames VALUES (1, zeroblob(${MAX}), NULL)`,
    `INSERT INTO frames VALUES (2, randomblob(${MAX}), randomblob(${MAX}))`,
  );
  const tables = await importCapture(cap.path, 1, store, OPTS);
  t.deepEqual(tables.map((x) => [x.name, x.rows]), [['frames', 2]], 'imported');
  const where = await located(dataDir, 1, 'frames');
  const col = (name: string) => `"${where.columns.find((c) => c.name === name)!.store}"`;
  const sizes = await storeQuery<{ a: number; b: number | null }>(dataDir, `SELECT ${lengthOf(col('img'))} AS a, ${lengthOf(col('raw'))} AS b FROM "${where.physical}" WHERE capture_id = ?`, [1]);
  const got = sizes.map((r) => [Number(r.a), r.b === null ? null : Number(r.b)]).sort((x, y) => (x[1] ?? 0) - (y[1] ?? 0));
  t.deepEqual(got, [[MAX, null], [MAX, MAX]], 'every value whole');
});

test('a value one byte over maxValueBytes: row_too_large, nothing stored', async (t) => {
  const cap = await sqlCapture(path.join(dir, 'over.sqlite'), 'CREATE TABLE frames (i INTEGER, img BLOB)', `INSERT INTO frames VALUES (1, zeroblob(${MAX + 1}))`);
  const err = await importCapture(cap.path, 2, store, OPTS).then(
    () => null,
    (e: unknown) => e as Error,
  );
  t.ok(err instanceof CaptureRejected && err.reason === 'row_too_large', `row_too_large (${err?.message})`);
  const [n] = await storeQuery<{ n: number }>(dataDir, 'SELECT count(*) AS n FROM rigd_capture_tables WHERE capture_id = 2');
  t.equal(Number(n!.n), 0, 'nothing recorded');
  await store.close();
});

/** A stored blob's length in bytes, on either engine (PostgreSQL: jsonb {"base64": ...}). */
function lengthOf(col: string): string {
  return onPostgres ? `octet_length(decode(${col}->>'base64', 'base64'))` : `length(${col})`;
}
