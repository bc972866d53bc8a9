/**
 * An import that copies in the engine: on a store connection with the checked capture ATTACHed
 * read-only as `cap` (opened and defended by the capture child, src/ingest/capture-copy.ts), one
 * transaction replaces the capture's rows: DELETE from the tables the catalog says it has, place each
 * table (placement.ts), `INSERT INTO main.<physical> (capture_id, ...) SELECT ?, ... FROM cap.<table>
 * ORDER BY <its key>`, record the catalog rows, COMMIT. Values move inside SQLite, byte for byte with
 * their storage class (the store's columns have no affinity). Anything thrown rolls back; a process
 * killed mid-copy leaves an uncommitted WAL tail that SQLite discards.
 */
import { pathToFileURL } from 'node:url';
import sqlite3 from 'sqlite3';
import { CAPTURE_ID_COLUMN, quoteIdent } from './layout.ts';
import type { StoreBounds } from './placement.ts';
import { prepareTable, recordCaptureTable, removeCapture } from './sqlite-catalog.ts';
import { all, closeDatabase, exec, run, STORE_PRAGMAS } from './sqlite-file.ts';

/** The schema name the capture is attached under. */
export const ATTACHED_CAPTURE = 'cap';

export interface AttachedTable {
  name: string;
  columns: readonly { name: string; type: string }[];
  /** The key to copy rows in (quoted identifiers): the rowid alias, or a WITHOUT ROWID table's primary key. */
  order: readonly string[];
  /** Whether `order` is the rowid (then rows are copied in chunks of rowid ranges, each reported). */
  rowid: boolean;
  /** Rows per chunk (at most COPY_CHUNK_ROWS; fewer for wide rows, so progress comes every few MB). */
  chunkRows?: number;
}

/** Rows per INSERT ... SELECT of a rowid table at most: progress (and its ack) comes once per chunk. */
export const COPY_CHUNK_ROWS = 200_000;
/** Bytes per chunk, about (by the table's widest row as the inspection measured it). */
export const COPY_CHUNK_BYTES = 32 * 1024 * 1024;

/** Opens the store file for a copy (URI names allowed, so the capture can be attached read-only), with the store's pragmas. */
export async function openStoreForCopy(file: string): Promise<sqlite3.Database> {
  const db = await new Promise<sqlite3.Database>((resolve, reject) => {
    const d: sqlite3.Database = new sqlite3.Database(file, sqlite3.OPEN_READWRITE | sqlite3.OPEN_URI, (err) => (err ? reject(err) : resolve(d)));
  });
  try {
    for (const sql of STORE_PRAGMAS) await exec(db, sql);
  } catch (err) {
    await closeDatabase(db).catch(() => undefined);
    throw err;
  }
  return db;
}

/**
 * Attaches the checked capture `file` read-only and immutable as ATTACHED_CAPTURE to a copy
 * connection (opened by openStoreForCopy and defended by the capture child first).
 */
export async function attachCapture(db: sqlite3.Database, file: string): Promise<void> {
  // The WAL is checkpointed by rigd's own store connection after the import (afterCopy), not by
  // this commit: the capture's bytes are not copied a second time on the import's clock.
  await run(db, 'PRAGMA wal_autocheckpoint = 0');
  await run(db, `ATTACH DATABASE ? AS ${ATTACHED_CAPTURE}`, [`${pathToFileURL(file).href}?mode=ro&immutable=1`]);
}

/** Replaces capture `captureId`'s rows with those of the attached capture; returns rows per table and rows removed. */
export async function copyAttached(
  db: sqlite3.Database,
  captureId: number,
  tables: readonly AttachedTable[],
  bounds: StoreBounds,
  /** Called with the rows of each chunk copied (before the commit); the copy waits for it. */
  onTable?: (table: string, rows: number) => Promise<void> | void,
  /** Runs right before COMMIT with the rows copied per table (throwing rolls back). */
  beforeCommit?: (rows: ReadonlyMap<string, number>) => Promise<void>,
): Promise<{ rows: Map<string, number>; replaced: number }> {
  const rows = new Map<string, number>();
  await run(db, 'BEGIN IMMEDIATE');
  try {
    const replaced = await removeCapture(db, captureId);
    for (const table of tables) {
      const p = await prepareTable(db, table, bounds);
      const into = [CAPTURE_ID_COLUMN, ...p.columns.map((c) => c.store)].map(quoteIdent).join(', ');
      const cols = table.columns.map((c) => quoteIdent(c.name)).join(', ');
      const from = `${ATTACHED_CAPTURE}.${quoteIdent(table.name)}`;
      const insert = (where: string, params: unknown[]) =>
        run(db, `INSERT INTO main.${quoteIdent(p.physical)} (${into}) SELECT ?${cols ? `, ${cols}` : ''} FROM ${from}${where}${table.order.length > 0 ? ` ORDER BY ${table.order.join(', ')}` : ''}`, [captureId, ...params]);
      let total = 0;
      if (!table.rowid) {
        total = (await insert('', [])).changes;
        await onTable?.(table.name, total);
      } else {
        // Chunks of rowid ranges; a rowid travels as text (exact past 2^53).
        const k = table.order[0]!;
        const chunk = Math.max(1, Math.min(COPY_CHUNK_ROWS, Math.floor(table.chunkRows ?? COPY_CHUNK_ROWS)));
        let after: string | null = null;
        for (;;) {
          const bound: { b: string }[] = await all<{ b: string }>(
            db,
            `SELECT CAST(${k} AS TEXT) AS b FROM ${from}${after === null ? '' : ` WHERE ${k} > CAST(? AS INTEGER)`} ORDER BY ${k} LIMIT 1 OFFSET ${chunk - 1}`,
            after === null ? [] : [after],
          );
          const upTo = bound[0]?.b ?? null;
          const conds: string[] = [];
          const params: unknown[] = [];
          if (after !== null) conds.push(`${k} > CAST(? AS INTEGER)`), params.push(after);
          if (upTo !== null) conds.push(`${k} <= CAST(? AS INTEGER)`), params.push(upTo);
          const { changes } = await insert(conds.length > 0 ? ` WHERE ${conds.join(' AND ')}` : '', params);
          total += changes;
          await onTable?.(table.name, changes);
          if (upTo === null) break;
          after = upTo;
        }
      }
      await recordCaptureTable(db, captureId, table.name, p, total);
      rows.set(table.name, total);
    }
    await beforeCommit?.(rows);
    await run(db, 'COMMIT');
    return { rows, replaced };
  } catch (err) {
    await run(db, 'ROLLBACK').catch(() => undefined);
    throw err;
  }
}
