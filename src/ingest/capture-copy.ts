/**
 * The import in the engine, in the capture child (after openChecked's defences and schema policy):
 * a connection on the SQLite store file gets the same defensive limits and pragmas as the capture's
 * (one attached database allowed, not query-only), the capture is ATTACHed read-only and immutable,
 * and the store copies its rows with INSERT ... SELECT in one transaction
 * (db/capture-store/sqlite-copy.ts). No row passes through JavaScript, in the child or in rigd.
 *
 * The copy and the checks overlap (two SQLite connections, two threads): after one walk of the
 * capture's pages (btreeStats: the chunk sizes), quick_check and the bounds (readTables: row counts,
 * row_too_large, time spans) run on the capture's own connection while the store connection
 * copies. The copy commits only once both have passed and its rows are the rows counted; a refusal
 * found meanwhile stops the copy at its next chunk and rolls it back, so nothing of a refused
 * capture is ever committed.
 */
import type sqlite3 from 'sqlite3';
import { pageInfo } from '../db/capture-file/handle.ts';
import { btreeStats, type BtreeStat } from '../db/capture-file/checks.ts';
import { attachCapture, COPY_CHUNK_BYTES, COPY_CHUNK_ROWS, copyAttached, openStoreForCopy, type AttachedTable } from '../db/capture-store/sqlite-copy.ts';
import { closeDatabase } from '../db/capture-store/sqlite-file.ts';
import { checkQuick, defend, rejectionFor } from './capture-open.ts';
import type { ChildMessage, ChildRequest, CopyResult, RawTimeSpan } from './capture-protocol.ts';
import { describeTables, readTables } from './capture-reader.ts';
import { CaptureRejected } from './capture-rejected.ts';
import { printable } from './capture-schema.ts';
import { checkStorable, keyOf } from './import-stream.ts';

/** A store failure (not the capture's): the import may be retried. */
export class StoreFailure extends Error {}

export async function copyIntoStore(
  req: ChildRequest,
  tables: readonly AttachedTable[],
  onTable: (table: string, rows: number) => Promise<void>,
  beforeCommit: (rows: ReadonlyMap<string, number>) => Promise<void>,
): Promise<CopyResult> {
  const target = req.import!.store!;
  let db: sqlite3.Database;
  try {
    db = await openStoreForCopy(target.file);
  } catch (err) {
    throw new StoreFailure(`the capture store ${target.file} cannot be opened: ${(err as Error).message}`);
  }
  try {
    await defend(db, req, true);
    await attachCapture(db, req.file);
    const { rows, replaced } = await copyAttached(db, target.captureId, tables, req.import!.bounds, onTable, beforeCommit);
    return { rows: Object.fromEntries(rows), replaced };
  } catch (err) {
    if (err instanceof CaptureRejected) throw err;
    const e = err as Error & { code?: string };
    throw new StoreFailure(`capture store ${target.file}: ${String(e.message ?? e).replace(/^SQLITE_[A-Z_]+: /, '')}`);
  } finally {
    await closeDatabase(db).catch(() => undefined);
  }
}

type Send = (msg: ChildMessage) => Promise<void>;

/**
 * Copies the opened capture `db` (defended, schema policy passed) into the store while quick_check
 * and the bounds scan run on `db`; resolves with the child's result once the copy has committed.
 * Steps sent: 'import' when the copy starts, 'import:checks' when it waits for the checks.
 * (The caller sent 'tables': the page walk.)
 */
export async function copyWhileChecking(req: ChildRequest, db: sqlite3.Database, send: Send, sendAndWait: Send): Promise<ChildMessage> {
  let described;
  try {
    described = await describeTables(db);
  } catch (err) {
    throw err instanceof CaptureRejected ? err : rejectionFor(err as Error, 'tables');
  }
  checkStorable(described, req.import!.bounds.maxColumns);
  // One walk of the pages first: each table's largest record bounds its rows' width, and so the
  // rows per chunk of its copy (a chunk's bytes are what the copy holds at once).
  let stats: Map<string, BtreeStat>;
  try {
    stats = await btreeStats(db);
  } catch (err) {
    throw rejectionFor(err as Error, 'tables');
  }
  const attached: AttachedTable[] = [];
  for (const t of described) {
    const { key, rowid } = await keyOf(db, t);
    const largest = stats.get(t.name)?.largest;
    const chunkRows = largest === undefined ? COPY_CHUNK_ROWS : Math.floor(COPY_CHUNK_BYTES / Math.max(largest + 8 * t.columns.length, 1));
    attached.push({ name: t.name, columns: t.columns, order: key, rowid, chunkRows });
  }
  await send({ type: 'step', step: 'import' });
  const started = performance.now();
  const timings: Record<string, number> = {};
  const spans: RawTimeSpan[] = [];
  let refusal: unknown;
  let checksDone = false;
  const checks = (async () => {
    await checkQuick(db);
    timings.quick_check = performance.now() - started;
    try {
      const tables = await readTables(db, { maxValueBytes: req.maxValueBytes, spans, stats });
      const { pageSize, pageCount } = await pageInfo(db);
      timings.tables = performance.now() - started;
      return { tables, pageSize, pageCount };
    } catch (err) {
      throw err instanceof CaptureRejected ? err : rejectionFor(err as Error, 'tables');
    }
  })();
  checks.then(
    () => (checksDone = true),
    (err: unknown) => (refusal = err),
  );
  let checked: Awaited<typeof checks> | undefined;
  let copied: CopyResult;
  try {
    copied = await copyIntoStore(
      req,
      attached,
      async (table, rows) => {
        // A refusal found meanwhile: stop here (the copy rolls back).
        if (refusal) throw refusal;
        await sendAndWait({ type: 'copied', table, rows });
      },
      async (rows) => {
        timings.copy = performance.now() - started;
        if (refusal === undefined && !checksDone) await send({ type: 'step', step: 'import:checks' });
        checked = await checks;
        // The rows copied are the rows counted (readTables): the commit waits for both to agree.
        const off = checked.tables.find((t) => rows.get(t.name) !== t.rows);
        if (off) throw new CaptureRejected('corrupt', `Capture is corrupt: read ${rows.get(off.name) ?? 0} rows of ${printable(off.name)}, counted ${off.rows}.`);
        await sendAndWait({ type: 'commit' });
      },
    );
  } catch (err) {
    // The copy failed: when the checks refuse the file, that is the reason (a damaged page the copy
    // read before quick_check reported it); otherwise it is the store's failure.
    await checks;
    throw err;
  }
  const { tables, pageSize, pageCount } = checked!;
  return { type: 'result', ok: true, pageSize, pageCount, tables, spans, copied, timings: roundAll(timings) };
}

function roundAll(t: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(t).map(([k, v]) => [k, Math.round(v)]));
}
