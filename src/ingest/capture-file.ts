/**
 * Capture file inspector: checks an untrusted SQLite capture uploaded by a rig and describes it.
 *
 * The cheap header checks run here, in rigd's process, on the first 100 bytes. Everything that makes
 * SQLite read the file runs in a short-lived child process (capture-child.ts) with a heap cap and a
 * hard timeout, so a hostile file can hang, crash or bloat only that child: rigd kills it with
 * SIGKILL when the time is up and answers with a CaptureRejected.
 *
 *   const info = await inspectCapture(tmpFile, { maxBytes: cfg.storage.max_upload_size, timeoutMs: 30_000 });
 *
 * A CaptureRejected means the file itself is refused (do not retry). Any other error means the
 * inspection could not run (e.g. the file vanished, the child could not start) and may be retried.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkHeader } from './capture-header.ts';
import { CaptureRejected, type CaptureRejectReason } from './capture-rejected.ts';

export { checkHeader, SQLITE_MAGIC, type CaptureHeader } from './capture-header.ts';
export { CaptureRejected, type CaptureRejectReason } from './capture-rejected.ts';

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

/** What the parent sends the child (the one IPC message it waits for). */
export interface ChildRequest {
  file: string;
  maxValueBytes: number;
  maxTables: number;
  memoryLimitMb: number;
}

/** What the child sends back: any number of steps, then exactly one result. */
export type ChildMessage =
  | { type: 'step'; step: string }
  | { type: 'stats'; maxRssKb: number }
  | { type: 'result'; ok: true; pageSize: number; pageCount: number; tables: CaptureTable[] }
  | { type: 'result'; ok: false; reason: CaptureRejectReason; message: string };

export const DEFAULT_MEMORY_LIMIT_MB = 64;
export const DEFAULT_MAX_VALUE_BYTES = 16 * 1024 * 1024;
export const DEFAULT_MAX_TABLES = 1000;

/** Child entry next to this module, with this module's extension (.ts under tsx, .js in dist/). */
function childEntry(): string {
  const self = fileURLToPath(import.meta.url);
  return path.join(path.dirname(self), `capture-child${path.extname(self)}`);
}

/** Node flags the child inherits (with their values): module loaders such as tsx's under tests. */
const INHERITED_WITH_VALUE = new Set(['--import', '--require', '-r', '--loader', '--experimental-loader', '--conditions', '-C']);
const INHERITED_ALONE = /^--(enable-source-maps|no-warnings|no-deprecation|disable-warning=|experimental-)/;

/**
 * The parent's loader flags plus the heap cap. Everything else is left out: --inspect would clash on
 * its port, and -e/-p/--input-type would make the child run the parent's script instead of its own.
 */
export function childExecArgv(parentArgv: readonly string[], memoryLimitMb: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < parentArgv.length; i++) {
    const a = parentArgv[i]!;
    const flag = a.includes('=') ? a.slice(0, a.indexOf('=')) : a;
    if (INHERITED_WITH_VALUE.has(flag)) {
      if (flag === a && i + 1 < parentArgv.length) out.push(a, parentArgv[++i]!);
      else out.push(a);
    } else if (INHERITED_ALONE.test(a) && !a.startsWith('--experimental-default-type')) {
      out.push(a);
    }
  }
  out.push(`--max-old-space-size=${memoryLimitMb}`);
  return out;
}

function abortError(): Error {
  const err = new Error('Capture inspection was aborted.');
  err.name = 'AbortError';
  return err;
}

/**
 * Inspects a capture file. Resolves with its description, or rejects with CaptureRejected when the
 * file is refused. The file is opened read-only and immutable: it is never changed and no -wal,
 * -shm or -journal file is created next to it. When the promise settles, the child has exited.
 */
export async function inspectCapture(file: string, opts: InspectOptions): Promise<CaptureInfo> {
  const started = Date.now();
  const memoryLimitMb = opts.memoryLimitMb ?? DEFAULT_MEMORY_LIMIT_MB;
  if (opts.signal?.aborted) throw abortError();
  opts.onStep?.('header');

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
  const header = checkHeader(head.subarray(0, got), st.size, opts.maxBytes);

  const remaining = opts.timeoutMs - (Date.now() - started);
  const request: ChildRequest = {
    file: path.resolve(file),
    maxValueBytes: opts.maxValueBytes ?? DEFAULT_MAX_VALUE_BYTES,
    maxTables: opts.maxTables ?? DEFAULT_MAX_TABLES,
    memoryLimitMb,
  };
  const answer = await runChild(request, Math.max(remaining, 0), memoryLimitMb, opts);
  return {
    sizeBytes: st.size,
    pageSize: answer.pageSize,
    pageCount: answer.pageCount,
    tables: answer.tables,
    ...(header.sqliteVersion !== undefined ? { sqliteVersion: header.sqliteVersion } : {}),
  };
}

type ChildSuccess = Extract<ChildMessage, { ok: true }>;

function runChild(request: ChildRequest, timeoutMs: number, memoryLimitMb: number, opts: InspectOptions): Promise<ChildSuccess> {
  return new Promise((resolve, reject) => {
    let outcome: { ok: true; value: ChildSuccess } | { ok: false; error: Error } | undefined;
    let stderrTail = '';
    let started = false;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      const o = outcome!;
      if (o.ok) resolve(o.value);
      else reject(o.error);
    };
    let child: ChildProcess;
    try {
      child = fork(childEntry(), [], {
        execArgv: childExecArgv(process.execArgv, memoryLimitMb),
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        serialization: 'json',
      });
    } catch (err) {
      reject(err as Error);
      return;
    }

    const settle = (o: NonNullable<typeof outcome>) => {
      if (outcome) return;
      outcome = o;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      // The answer is in (or the time is up): make sure the child is gone, and settle once it has exited.
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    };
    const onAbort = () => settle({ ok: false, error: abortError() });
    const timer = setTimeout(() => {
      settle({
        ok: false,
        error: new CaptureRejected('timeout', `Capture inspection did not finish within ${opts.timeoutMs} ms and was stopped.`),
      });
    }, timeoutMs);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (child.pid !== undefined) {
      opts.onChild?.(child.pid);
      // Queued on the IPC channel until the child listens; a dead child is reported by 'exit'.
      child.send(request, (err) => void err);
    }

    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (s: string) => {
      stderrTail = (stderrTail + s).slice(-2000);
    });
    child.on('message', (raw: unknown) => {
      const msg = raw as ChildMessage;
      if (outcome || typeof msg !== 'object' || msg === null) return;
      if (msg.type === 'step') {
        if (msg.step === 'started') started = true;
        opts.onStep?.(msg.step);
      } else if (msg.type === 'stats') {
        opts.onStats?.({ maxRssKb: msg.maxRssKb });
      } else if (msg.type === 'result') {
        if (msg.ok) settle({ ok: true, value: msg });
        else settle({ ok: false, error: new CaptureRejected(msg.reason, msg.message) });
      }
    });
    child.on('error', (err) => {
      // Spawn failure: no 'exit' follows. (A failed send to a dead child is reported by 'exit'.)
      if (child.pid === undefined) {
        settle({ ok: false, error: err });
        finish();
      }
    });
    child.on('exit', (code, signal) => {
      if (!outcome) {
        const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        const err = started
          ? new CaptureRejected(
              'inspector_crashed',
              `Capture inspection process ${how} before answering (it may have hit its ${memoryLimitMb} MiB memory cap).`,
            )
          : // Never got going: our problem (install, loader), not the file's. Retryable.
            new Error(`Capture inspection process ${how} before it started: ${stderrTail.trim().split('\n').slice(-3).join(' | ')}`);
        (err as Error & { stderr?: string }).stderr = stderrTail;
        settle({ ok: false, error: err });
      }
      // Settle on 'exit' so that the child is gone when the caller continues.
      finish();
    });
  });
}
