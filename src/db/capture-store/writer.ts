/**
 * The capture store's write contract: what an import hands the store, whatever database is behind it.
 * The SQLite store (sqlite-writer.ts) implements it; a PostgreSQL one (its own schema, COPY) can too.
 *
 *   await store.replace(captureId, tables, batches, (p) => report(p.rows));
 *
 * `replace` puts exactly the given rows in place of whatever the store held for that capture, in one
 * transaction: a failure (or a process killed with -9) leaves the capture's previous rows, never a
 * mixture; a repeat with the same rows leaves the store as it was. Calls are served one at a time.
 */
import type { StoreColumn } from './layout.ts';
import type { StoreBounds } from './placement.ts';

/** One capture table as the import announces it, before its rows. */
export interface StoreTable {
  name: string;
  /** The capture's columns in their order; rows carry their values in this order. */
  columns: StoreColumn[];
}

/**
 * A run of rows of one table; each row holds one value per column of that table, in order. Blob
 * values may be views of a buffer the import reuses: a writer uses (or copies) them before it asks
 * for the next batch, and keeps no reference to them after.
 */
export interface RowBatch {
  table: string;
  rows: unknown[][];
  /** Approximate size of the values, bytes (for progress). */
  bytes: number;
  /**
   * Each row's storage classes, one letter per value (SQLite's typeof: n, i, r, t, b), when the
   * source knows them: an integer past 2^53 then travels as its digits, and a real 1.0 stays real.
   */
  classes?: string[];
}

export interface ReplaceProgress {
  /** Rows written so far in this call, all tables. */
  rows: number;
  bytes: number;
  /** The table of the last batch written. */
  table: string;
}

export interface ReplaceResult {
  /** Rows written per table name (as announced). */
  rows: Map<string, number>;
  /** Rows of this capture removed before (from an earlier import of the same capture). */
  replaced: number;
}

/**
 * A store that an import can copy into from the capture child, in the engine (SQLite: the child
 * attaches the capture to a connection on this file; sqlite-copy.ts), one import at a time.
 */
export interface EngineCopyTarget {
  /** The store's file. */
  file: string;
  /** Runs fn (the child's whole copy) in the store's turn. */
  turn<T>(fn: () => Promise<T>): Promise<T>;
  /** After a copy committed: checkpoints the WAL in the background (in the store's next turn). */
  afterCopy(): void;
}

/** A statement on the store's own connection, inside the replace's transaction; resolves with the row count. */
export type StoreTxQuery = (text: string, values: unknown[]) => Promise<number>;

export interface ReplaceOptions {
  /**
   * Runs right before COMMIT, inside the transaction; throwing rolls everything back. PostgreSQL
   * passes a query on the transaction's connection (the service's tables are in the same database),
   * SQLite none (its store is a file of its own).
   */
  beforeCommit?: (query?: StoreTxQuery) => Promise<void>;
}

export interface CaptureStoreWriter {
  /** Per-capture bounds (config captures.*). */
  readonly bounds: StoreBounds;
  /** Present when imports copy in the engine instead of handing rows to replace(). */
  readonly inEngine?: EngineCopyTarget;
  /**
   * Replaces every row of `captureId` with the rows of `batches` (tables created and columns added
   * as needed), committing once `batches` ends; if it throws, nothing changes and its error is
   * rethrown. Every batch must name a table of `tables`.
   */
  replace(
    captureId: number,
    tables: readonly StoreTable[],
    batches: AsyncIterable<RowBatch>,
    onProgress?: (p: ReplaceProgress) => void,
    opts?: ReplaceOptions,
  ): Promise<ReplaceResult>;
  close(): Promise<void>;
}
