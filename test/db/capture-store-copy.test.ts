// Copying the capture store through the CaptureStoreWriter contract: SQLite store -> another SQLite store.
import test from 'tape';
import { all, captureRows, openStoreReadOnly } from '../../src/db/capture-store/read.ts';
import { openCaptureStore } from '../../src/db/capture-store/sqlite-writer.ts';
import type { RowBatch, StoreTable } from '../../src/db/capture-store/writer.ts';
import { copyCaptureStore, storeTableCounts } from '../../src/db/copy/capture-store-copy.ts';
import { tmpDir } from '../helpers/tmp.ts';

const frames: StoreTable = { name: 'frames', columns: [{ name: 't', type: 'TIMESTAMP' }, { name: 'n', type: 'INTEGER' }, { name: 'raw', type: '' }, { name: 'x', type: 'REAL' }] };
const Notes: StoreTable = { name: 'Notes', columns: [{ name: 'text', type: 'TEXT' }] };

async function* batches(list: RowBatch[]): AsyncGenerator<RowBatch> {
  for (const b of list) yield b;
}

test('copyCaptureStore: every capture, every row and value, through writer.replace', async (t) => {
  const from = tmpDir();
  const to = tmpDir();
  const src = await openCaptureStore(from);
  const big = '9007199254740993'; // 2^53 + 1: not a JavaScript number
  const many = Array.from({ length: 1203 }, (_, i) => ['2026-11-23T10:00:00Z', i, Buffer.from([i & 255, 0, 255]), i / 3]);
  await src.replace(1, [frames], batches([{ table: 'frames', rows: many, bytes: 0 }]));
  await src.replace(2, [frames, Notes], batches([
    // The row's classes say n holds an integer (past 2^53, it comes as its digits) and x a real 1.0.
    { table: 'frames', rows: [[null, big, Buffer.alloc(0), 1]], bytes: 0, classes: ['nibr'] },
    { table: 'Notes', rows: [['héllo'], [null]], bytes: 0 },
  ]));
  await src.close();

  const reader = (await openStoreReadOnly(from))!;
  const target = await openCaptureStore(to);
  const seen: number[] = [];
  const result = await copyCaptureStore(reader.db, [{ id: 1, tables: [frames] }, { id: 2, tables: [frames, Notes] }], target, (id) => seen.push(id));
  await target.close();
  t.deepEqual(seen, [1, 2], 'one replace per capture');
  t.equal(result.captures, 2);
  t.deepEqual([...result.rows].sort(), [['frames', 1204], ['notes', 2]], 'rows per store table');
  t.deepEqual([...(await storeTableCounts(reader.db))].sort(), [['frames', 1204], ['notes', 2]], 'the source counts agree');

  const copy = (await openStoreReadOnly(to))!;
  for (const [id, table] of [[1, frames], [2, frames], [2, Notes]] as const) {
    const cols = table.columns.map((c) => c.name);
    const a: unknown[] = [];
    const b: unknown[] = [];
    for await (const r of captureRows(reader.db, table.name, cols, id)) a.push(r);
    for await (const r of captureRows(copy.db, table.name, cols, id)) b.push(r);
    t.deepEqual(b, a, `capture ${id} ${table.name}: same values in the same order`);
  }
  const [bigRow] = await all<{ v: string; ty: string }>(copy.db, "SELECT CAST(n AS TEXT) AS v, typeof(n) AS ty FROM frames WHERE capture_id = 2");
  t.deepEqual(bigRow, { v: big, ty: 'integer' }, 'a big integer stays an exact integer');
  const [real] = await all<{ ty: string }>(copy.db, 'SELECT typeof(x) AS ty FROM frames WHERE capture_id = 2');
  t.deepEqual(real, { ty: 'real' }, 'a real that looks like an integer stays a real');
  const [blob] = await all<{ ty: string; len: number }>(copy.db, 'SELECT typeof(raw) AS ty, length(raw) AS len FROM frames WHERE capture_id = 1 LIMIT 1');
  t.deepEqual(blob, { ty: 'blob', len: 3 }, 'blobs stay blobs');
  await copy.close();
  await reader.close();
});
