/**
 * Capture file inspector: checks an untrusted SQLite capture uploaded by a rig and describes it.
 *
 * The cheap header checks run here, in rigd's process, on the first 100 bytes. Everything that makes
 * SQLite read the file runs in a short-lived child process (capture-child.ts, supervised by
 * capture-child-run.ts) with a heap cap and a hard timeout, so a hostile file can hang, crash or
 * bloat only that child: rigd kills it with SIGKILL when the time is up and answers with a
 * CaptureRejected. The import (import.ts) runs the same child, which then also streams the rows.
 *
 *   const info = await inspectCapture(tmpFile, { maxBytes: cfg.storage.max_upload_size, timeoutMs: 30_000 });
 *
 * A CaptureRejected means the file itself is refused (do not retry). Any other error means the
 * inspection could not run (e.g. the file vanished, the child could not start) and may be retried.
 */
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { checkHeader, type CaptureHeader } from './capture-header.ts';
import { abortError, runChild } from './capture-child-run.ts';
import type { CaptureTable, ChildRequest } from './capture-protocol.ts';
import { CaptureRejected } from './capture-rejected.ts';

export { checkHeader, SQLITE_MAGIC, type CaptureHeader } from './capture-header.ts';
export { CaptureRejected, type CaptureRejectReason } from './capture-rejected.ts';
export { childExecArgv } from './capture-child-run.ts';
export type { CaptureColumn, CaptureTable, ChildMessage, ChildRequest } from './capture-protocol.ts';

export interface CaptureInfo {
  sizeBytes: number;
  pageSize: number;
  pageCount: number;
  /** Plain tables in schema order, without SQLite's internal sqlite_* tables. */
  tables: CaptureTable[];
  /** SQLITE_VERSION_NUMBER of the library that last wrote the file (header offset 96), e.g. 3045001. */
  sqliteVersion?: number;
}

export interface InspectOptions {
  /** Largest file accepted, in bytes (storage.max_upload_size). */
  maxBytes: number;
  /** Wall-clock budget for the whole inspection, from the call to the answer (ingest.job_timeout_ms or less). */
  timeoutMs: number;
  /** V8 heap cap of the child process and SQLite's hard heap limit inside it, MiB (default 64). */
  memoryLimitMb?: number;
  /** Largest single value (string or blob) allowed in the capture, bytes (default 16 MiB). */
  maxValueBytes?: number;
  /** Most plain tables a capture may have (default 1000). */
  maxTables?: number;
  /** Progress: 'header', 'started', 'opened', 'schema', 'quick_check', 'tables'. */
  onStep?: (step: string) => void;
  /** Resource use of the child, reported just before its answer (peak RSS in KiB). */
  onStats?: (stats: { maxRssKb: number }) => void;
  /** Called with the child's pid once it is forked (for supervision and tests). */
  onChild?: (pid: number) => void;
  /** Aborting kills the child; the promise then rejects with an AbortError (not a CaptureRejected). */
  signal?: AbortSignal;
}

export const DEFAULT_MEMORY_LIMIT_MB = 64;
export const DEFAULT_MAX_VALUE_BYTES = 16 * 1024 * 1024;
export const DEFAULT_MAX_TABLES = 1000;

/** The checks made in rigd's process: a regular file, no larger than maxBytes, with a sound header. */
export async function checkCaptureFile(file: string, maxBytes: number): Promise<{ sizeBytes: number; header: CaptureHeader }> {
  const st = await stat(file);
  if (!st.isFile()) throw new CaptureRejected('not_sqlite', 'Capture is not a regular file.');
  const head = Buffer.alloc(100);
  const fh = await open(file, 'r');
  let got: number;
  try {
    ({ bytesRead: got } = await fh.read(head, 0, 100, 0));
  } finally {
    await fh.close();
  }
  return { sizeBytes: st.size, header: checkHeader(head.subarray(0, got), st.size, maxBytes) };
}

/** The request for the child, with the defaults filled in. */
export function childRequest(file: string, opts: Pick<InspectOptions, 'memoryLimitMb' | 'maxValueBytes' | 'maxTables'>): ChildRequest {
  return {
    file: path.resolve(file),
    maxValueBytes: opts.maxValueBytes ?? DEFAULT_MAX_VALUE_BYTES,
    maxTables: opts.maxTables ?? DEFAULT_MAX_TABLES,
    memoryLimitMb: opts.memoryLimitMb ?? DEFAULT_MEMORY_LIMIT_MB,
  };
}

/**
 * Inspects a capture file. Resolves with its description, or rejects with CaptureRejected when the
 * file is refused. The file is opened read-only and immutable: it is never changed and no -wal,
 * -shm or -journal file is created next to it. When the promise settles, the child has exited.
 */
export async function inspectCapture(file: string, opts: InspectOptions): Promise<CaptureInfo> {
  const started = Date.now();
  if (opts.signal?.aborted) throw abortError('inspection');
  opts.onStep?.('header');
  const { sizeBytes, header } = await checkCaptureFile(file, opts.maxBytes);
  const remaining = Math.max(opts.timeoutMs - (Date.now() - started), 0);
  const answer = await runChild(childRequest(file, opts), remaining, opts.timeoutMs, {
    what: 'inspection',
    onStep: opts.onStep,
    onStats: opts.onStats,
    onChild: opts.onChild,
    signal: opts.signal,
  });
  return {
    sizeBytes,
    pageSize: answer.pageSize,
    pageCount: answer.pageCount,
    tables: answer.tables,
    ...(header.sqliteVersion !== undefined ? { sqliteVersion: header.sqliteVersion } : {}),
  };
}
