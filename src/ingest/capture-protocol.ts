/**
 * What the capture child (capture-child.ts) and rigd say to each other over IPC (forked with
 * `serialization: 'advanced'`). An import's rows do not travel on IPC: each batch is written to the
 * spool file the child inherits as SPOOL_FD (batch-spool.ts, encoded as batch-frame.ts says) and
 * announced by a 'batch' message.
 */
import type { StoreBounds } from '../db/capture-store/placement.ts';
import type { CaptureRejectReason } from './capture-rejected.ts';

export interface CaptureColumn {
  name: string;
  /** Declared type as written in the schema ('' when none). */
  type: string;
}

export interface CaptureTable {
  name: string;
  columns: CaptureColumn[];
  rows: number;
}

/** The child's descriptor of the import's spool file (after stdin, stdout, stderr and IPC). */
export const SPOOL_FD = 4;

/** Present when the child is to stream the rows after the inspection (the import). */
export interface ImportRequest {
  /** Most rows per batch. */
  batchRows: number;
  /** Most bytes of values per batch (a single larger row still travels, alone). */
  batchBytes: number;
  /** Per-capture bounds of the store (too_wide and too_many_tables are checked before any row moves). */
  bounds: StoreBounds;
  /**
   * Copy in the engine: the child opens this SQLite store file, attaches the checked capture
   * read-only and replaces the capture's rows in one transaction (no batches travel).
   */
  store?: { file: string; captureId: number };
}

/** What the parent sends the child first (the one request it serves). */
export interface ChildRequest {
  file: string;
  maxValueBytes: number;
  maxTables: number;
  memoryLimitMb: number;
  import?: ImportRequest;
}

/** The smallest and largest value of a table's time column, as SQLite's min() and max() give them. */
export interface RawTimeSpan {
  table: string;
  column: string;
  min: unknown;
  max: unknown;
}

/**
 * What the child sends: steps; when importing, 'tables' and then 'batch'es, each followed by a wait
 * for the parent's 'ack' (back-pressure: one batch in flight); then stats and exactly one result.
 * A 'batch' says which table, how many rows, the bytes of values as measured in the capture, and the
 * length of its frame in the spool file (at offset 0); each row in the frame carries one more value
 * after its own, its storage classes (one letter per value: n, i, r, t, b). An import in the engine
 * sends 'copied' per table instead of batches.
 */
export type ChildMessage =
  | { type: 'step'; step: string }
  | { type: 'stats'; maxRssKb: number }
  | { type: 'tables'; tables: CaptureTable[] }
  | { type: 'batch'; table: string; rows: number; bytes: number; frameBytes: number }
  | { type: 'copied'; table: string; rows: number }
  /** An import in the engine is ready to commit: it waits for rigd's ack (no ack: no commit). */
  | { type: 'commit' }
  /** timings (an import in the engine): ms from the copy's start to the end of quick_check, of the bounds scan (tables) and of the copy. */
  | { type: 'result'; ok: true; pageSize: number; pageCount: number; tables: CaptureTable[]; spans?: RawTimeSpan[]; copied?: CopyResult; timings?: Record<string, number> }
  | { type: 'result'; ok: false; reason: CaptureRejectReason; message: string }
  /** The store failed (disk full, locked, unreachable): not the capture's fault, the import may be retried. */
  | { type: 'result'; ok: false; store: true; message: string };

/** What an import in the engine wrote: rows per capture table, and rows of an earlier import removed. */
export interface CopyResult {
  rows: Record<string, number>;
  replaced: number;
}

/** The parent's go-ahead for the child's next message (after 'tables' or a 'batch'). */
export interface AckMessage {
  type: 'ack';
}
