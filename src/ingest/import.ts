/**
 * The import of an accepted capture into the capture store.
 *
 *   const tables = await importCapture(file, captureId, store, { timeoutMs, maxBytes, signal, onProgress });
 *
 * The untrusted file is read only by the capture child (the inspector's sandbox: read-only and
 * immutable, SQLite's defensive settings, schema policy, quick_check, heap cap, time bound), which
 * also refuses a capture over the store's bounds (too_many_tables, too_wide) before any row moves.
 *
 * SQLite store (store.inEngine): in the store's turn, the child attaches the checked capture to a
 * connection on the store file and copies it with INSERT ... SELECT in one transaction
 * (capture-copy.ts): rows never pass through rigd. Otherwise (PostgreSQL) the child streams the rows in batches (at most BATCH_ROWS rows and about BATCH_BYTES
 * bytes each, one in flight), each written to an unnamed spool file (batch-spool.ts) and announced on
 * IPC; rigd reads each into one reused buffer, decodes it (batch-frame.ts) and writes the rows through
 * the store writer in one transaction, which
 * commits only once the child has sent every row. So a refusal, a timeout, an abort, a crash of the
 * child or of rigd (even kill -9) leaves the capture's rows as they were before; a repeat replaces
 * them (no duplicates). Imports into one store take turns.
 *
 * Throws CaptureRejected when the file is refused (do not retry); anything else may be retried.
 * Steps reported (onStep): those of the inspection ('header' ... 'tables'), then 'import'.
 */
import type { CaptureTableSummary } from '../db/capture-store/layout.ts';
import type { CaptureStoreWriter, ReplaceOptions, StoreTable } from '../db/capture-store/writer.ts';
import { decodeFrame } from './batch-frame.ts';
import { BatchSpool } from './batch-spool.ts';
import { abortError, runChild, type ChildSuccess } from './capture-child-run.ts';
import { checkCaptureFile, childRequest, type CaptureInfo, type InspectOptions } from './capture-file.ts';
import type { CaptureTable, ChildMessage } from './capture-protocol.ts';
import { BatchChannel } from './import-batches.ts';
import { timeColumn, timeSpan } from './import-time.ts';

/** Most rows per batch. */
export const BATCH_ROWS = 1000;
/**
 * Bytes of values per batch, about (a single larger row travels alone). rigd holds one batch's bytes
 * in the spool's reused buffer: on a 200 MB capture its RSS grows about 34 MB with 1 MiB, 48 MB with
 * 4 MiB, 33 MB with 256 KiB (see bench/capture-import.ts and README "The capture store").
 */
export const BATCH_BYTES = 1024 * 1024;

/** Bytes a value's frame encoding adds at most (tag and length, or a float64). */
const FRAME_VALUE_OVERHEAD = 9;

export interface ImportProgress {
  /** Rows written so far, all tables. */
  rows: number;
  /** Bytes of values written so far (as measured in the capture). */
  bytes: number;
  /** The table being written. */
  table: string;
}

export interface ImportOptions extends Pick<InspectOptions, 'memoryLimitMb' | 'maxValueBytes' | 'maxTables' | 'onStep' | 'onStats' | 'onChild'> {
  /** Wall-clock budget from the call to the commit, ms (the child is killed when it runs out). */
  timeoutMs: number;
  /** Largest file accepted, bytes (storage.max_upload_size). */
  maxBytes: number;
  /** Aborting kills the child and rolls back; the promise rejects with an AbortError. */
  signal?: AbortSignal;
  onProgress?: (p: ImportProgress) => void;
  /** What inspectCapture would have answered (size, pages, tables, SQLite version), once committed. */
  onInspected?: (info: CaptureInfo) => void;
  /** @default BATCH_ROWS */
  batchRows?: number;
  /** @default BATCH_BYTES */
  batchBytes?: number;
  /**
   * Runs right before the store's COMMIT (throwing rolls the import back): on PostgreSQL with a query
   * on the store transaction's connection, so a check of the job's lease and the commit are one.
   */
  beforeCommit?: ReplaceOptions['beforeCommit'];
  /** An import in the engine: when its overlapped parts ended, ms from the copy's start (quick_check, tables, copy). */
  onTimings?: (timings: Record<string, number>) => void;
}

/** Imports `file` as capture `captureId`; resolves with its tables once they are committed. */
export async function importCapture(file: string, captureId: number, store: CaptureStoreWriter, opts: ImportOptions): Promise<CaptureTableSummary[]> {
  const started = Date.now();
  if (opts.signal?.aborted) throw abortError('import');
  opts.onStep?.('header');
  const { sizeBytes, header } = await checkCaptureFile(file, opts.maxBytes);
  const inspected = (result: ChildSuccess) =>
    opts.onInspected?.({
      sizeBytes,
      pageSize: result.pageSize,
      pageCount: result.pageCount,
      tables: result.tables,
      ...(header.sqliteVersion !== undefined ? { sqliteVersion: header.sqliteVersion } : {}),
    });
  const bounds = store.bounds;
  const base = { ...childRequest(file, { ...opts, maxTables: bounds.maxTables }), import: { batchRows: opts.batchRows ?? BATCH_ROWS, batchBytes: opts.batchBytes ?? BATCH_BYTES, bounds } };
  if (store.inEngine) {
    const target = store.inEngine;
    return target.turn(async () => {
      const request = { ...base, import: { ...base.import, store: { file: target.file, captureId } } };
      const progress: ImportProgress = { rows: 0, bytes: 0, table: '' };
      const remaining = Math.max(opts.timeoutMs - (Date.now() - started), 0);
      let refused: Error | undefined;
      const stop = new AbortController();
      const onAbort = () => stop.abort();
      if (opts.signal?.aborted) stop.abort();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      const result = await runChild(request, remaining, opts.timeoutMs, {
        what: 'import',
        onStep: opts.onStep,
        onStats: opts.onStats,
        onChild: opts.onChild,
        signal: stop.signal,
        onMessage: (msg, reply) => {
          if (msg.type === 'commit') {
            // The go-ahead only while this run may still commit (its lease held, not aborted).
            Promise.resolve(opts.beforeCommit?.()).then(
              () => reply({ type: 'ack' }),
              (err: Error) => {
                refused = err;
                stop.abort();
              },
            );
            return;
          }
          if (msg.type !== 'copied') return;
          progress.rows += msg.rows;
          progress.table = msg.table;
          opts.onProgress?.({ ...progress });
          // The child commits only after the last table's ack: an abort here stops it first.
          if (!opts.signal?.aborted) reply({ type: 'ack' });
        },
      })
        .catch((err: Error) => {
          throw refused ?? (opts.signal?.aborted ? abortError('import') : err);
        })
        .finally(() => opts.signal?.removeEventListener('abort', onAbort));
      if (!result.copied) throw new Error('the capture child answered without copying the capture');
      target.afterCopy();
      if (result.timings) opts.onTimings?.(result.timings);
      inspected(result);
      return summaries(result.tables, new Map(Object.entries(result.copied.rows)), result);
    });
  }

  // Stops the child when the store fails (or the caller aborts).
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  let reply: (() => void) | undefined;
  const channel = new BatchChannel(() => reply?.());
  let announced!: (tables: CaptureTable[]) => void;
  const tablesIn = new Promise<CaptureTable[]>((resolve) => (announced = resolve));
  let widths = new Map<string, number>();

  const request = base;
  const spool = BatchSpool.open();
  // The largest frame a batch can take: a full batch, or one row of values at the inspection's cap.
  // Each row carries its class string after its values (one letter per value).
  const frameLimit = (width: number) => request.import.batchBytes + width * (request.maxValueBytes + FRAME_VALUE_OVERHEAD) + width + FRAME_VALUE_OVERHEAD;
  const receive = async (msg: Extract<ChildMessage, { type: 'batch' }>): Promise<void> => {
    const width = widths.get(msg.table);
    if (width === undefined) throw new Error(`capture child sent rows for table ${JSON.stringify(msg.table)}, which it did not announce`);
    const frame = await spool.read(msg.frameBytes, frameLimit(width));
    const rows = decodeFrame(frame, msg.rows, width + 1);
    const classes = rows.map((r) => {
      const cls = r.pop();
      if (typeof cls !== 'string' || cls.length !== width) throw new Error(`capture child sent a row of ${msg.table} without its classes`);
      return cls;
    });
    channel.push({ table: msg.table, rows, bytes: msg.bytes, classes });
  };
  const remaining = Math.max(opts.timeoutMs - (Date.now() - started), 0);
  const child = runChild(request, remaining, opts.timeoutMs, {
    what: 'import',
    onStep: opts.onStep,
    onStats: opts.onStats,
    onChild: opts.onChild,
    signal: stop.signal,
    spoolFd: spool.fd,
    onMessage: (msg, send) => {
      reply = () => send({ type: 'ack' });
      if (msg.type === 'tables') {
        widths = new Map(msg.tables.map((t) => [t.name, t.columns.length]));
        announced(msg.tables);
      } else if (msg.type === 'batch') {
        receive(msg).catch((err: Error) => {
          channel.fail(err);
          stop.abort();
        });
      }
    },
  });
  child.then(
    () => channel.end(),
    (err: Error) => channel.fail(opts.signal?.aborted ? abortError('import') : err),
  );

  try {
    const noTables = child.then((): never => {
      throw new Error('the capture child answered without its list of tables');
    });
    noTables.catch(() => undefined); // settles after the tables in a good run
    const tables = await Promise.race([tablesIn, noTables]);
    const announce: StoreTable[] = tables.map((t) => ({ name: t.name, columns: t.columns }));
    const written = await store.replace(captureId, announce, channel, (p) => opts.onProgress?.({ rows: p.rows, bytes: p.bytes, table: p.table }), {
      beforeCommit: opts.beforeCommit,
    });
    const result: ChildSuccess = await child;
    inspected(result);
    return summaries(tables, written.rows, result);
  } catch (err) {
    stop.abort();
    await child.catch(() => undefined);
    if (opts.signal?.aborted) throw abortError('import');
    throw err;
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    await spool.close();
  }
}

function summaries(tables: CaptureTable[], rows: Map<string, number>, result: ChildSuccess): CaptureTableSummary[] {
  return tables.map((t) => {
    const column = timeColumn(t.columns);
    const raw = result.spans?.find((s) => s.table === t.name);
    const span = column && raw ? timeSpan(raw.min, raw.max) : { first: null, last: null };
    return { name: t.name, columns: t.columns.map((c) => ({ name: c.name, type: c.type })), rows: rows.get(t.name) ?? 0, time_column: column, ...span };
  });
}
