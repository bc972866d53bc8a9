/**
 * Child process entry of the capture inspector and importer (forked by capture-child-run.ts; never
 * imported by rigd).
 *
 * Waits for one ChildRequest on IPC, opens the capture read-only and immutable with SQLite's
 * defensive settings, checks the schema policy and runs quick_check (capture-open.ts), reads the
 * tables through capture-reader.ts; when asked to import, either copies in the engine into the
 * SQLite store it names (capture-copy.ts: the capture attached read-only to a store connection, the
 * copy running while quick_check and the bounds scan run on the capture's own connection, and
 * committing only once both passed), or streams the rows (import-stream.ts): each batch written
 * to the spool file (SPOOL_FD, batch-frame.ts's encoding) and announced on IPC, the next one waiting for the parent's ack. Then it sends one result and exits. The parent enforces time
 * (SIGKILL) and V8 heap (--max-old-space-size); SQLite's own memory is capped with hard_heap_limit.
 */
import type sqlite3 from 'sqlite3';
import { write } from 'node:fs';
import { FrameWriter } from './batch-frame.ts';
import { SPOOL_FD, type ChildMessage, type ChildRequest, type RawTimeSpan } from './capture-protocol.ts';
import { readTables } from './capture-reader.ts';
import { pageInfo } from '../db/capture-file/handle.ts';
import { CaptureRejected, type CaptureRejectReason } from './capture-rejected.ts';
import { close, openChecked, rejectionFor, type Step } from './capture-open.ts';
import { checkStorable, streamTables } from './import-stream.ts';
import { copyWhileChecking, StoreFailure } from './capture-copy.ts';

function send(msg: ChildMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) return resolve();
    process.send(msg, undefined, {}, () => resolve());
  });
}

/** Acks from the parent, each releasing the one message waiting for it. */
let waiting: (() => void) | undefined;
let early = 0;
function onAck(): void {
  if (waiting) {
    const go = waiting;
    waiting = undefined;
    go();
  } else {
    early++;
  }
}

/** Sends a message that needs the parent's ack, and waits for it. */
async function sendAndWait(msg: ChildMessage): Promise<void> {
  const acked = new Promise<void>((resolve) => {
    if (early > 0) {
      early--;
      resolve();
    } else {
      waiting = resolve;
    }
  });
  await send(msg);
  await acked;
}

/** Writes a batch's frame at offset 0 of the spool file (rigd has read the previous one: it acked). */
async function writeSpool(frame: Buffer): Promise<void> {
  let at = 0;
  while (at < frame.length) {
    at += await new Promise<number>((resolve, reject) =>
      write(SPOOL_FD, frame, at, frame.length - at, at, (err, n) => (err ? reject(err) : resolve(n))),
    );
  }
}

function rejected(reason: CaptureRejectReason, message: string): ChildMessage {
  return { type: 'result', ok: false, reason, message };
}

async function serve(req: ChildRequest): Promise<ChildMessage> {
  let step: Step = 'opened';
  let db: sqlite3.Database | undefined;
  try {
    const inEngine = req.import?.store !== undefined;
    db = await openChecked(
      req,
      async (s) => {
        step = s;
        await send({ type: 'step', step: s });
      },
      (opened) => (db = opened),
      !inEngine,
    );
    step = 'tables';
    await send({ type: 'step', step });
    if (inEngine) return await copyWhileChecking(req, db, send, sendAndWait);
    const widestRow = new Map<string, number>();
    const spans: RawTimeSpan[] = [];
    const tables = await readTables(db, { maxValueBytes: req.maxValueBytes, widest: widestRow, ...(req.import ? { spans } : {}) });
    const { pageSize, pageCount } = await pageInfo(db);
    if (!req.import) return { type: 'result', ok: true, pageSize, pageCount, tables };

    checkStorable(tables, req.import.bounds.maxColumns);
    step = 'import';
    await send({ type: 'step', step });
    await sendAndWait({ type: 'tables', tables });
    const frames = new FrameWriter();
    await streamTables(db, tables, widestRow, req.import, async (batch) => {
      const frame = frames.encodeRecords(batch.records, batch.fields, batch.width);
      await writeSpool(frame);
      // Unmeasured (every row known to fit): the frame's length stands for the rows' bytes.
      await sendAndWait({ type: 'batch', table: batch.table, rows: batch.records.length, bytes: batch.bytes ?? frame.length, frameBytes: frame.length });
    });
    return { type: 'result', ok: true, pageSize, pageCount, tables, spans };
  } catch (err) {
    if (err instanceof StoreFailure) return { type: 'result', ok: false, store: true, message: err.message };
    if (err instanceof CaptureRejected) return rejected(err.reason, err.message);
    const r = rejectionFor(err as Error, step);
    return rejected(r.reason, r.message);
  } finally {
    if (db) await close(db);
  }
}

process.on('message', (msg: ChildRequest | { type: 'ack' }) => {
  if ((msg as { type?: string }).type === 'ack') return onAck();
  if (serving) return;
  serving = true;
  void serve(msg as ChildRequest)
    .catch((err: unknown) => rejected('corrupt', `Capture could not be read: ${String((err as Error)?.message ?? err).slice(0, 300)}`))
    .then(async (result) => {
      await send({ type: 'stats', maxRssKb: process.resourceUsage().maxRSS });
      await send(result);
      process.exit(0);
    });
});
let serving = false;
// rigd gone (killed with -9 mid-import): nobody is left to read what this process would send.
process.on('disconnect', () => process.exit(1));
void send({ type: 'step', step: 'started' });
