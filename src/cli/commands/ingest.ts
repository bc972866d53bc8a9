import type { Command } from 'commander';
import { writeWaiter } from '../../db/write-watch.ts';
import { DomainError } from '../../errors.ts';
import type { CaptureView } from '../../services/captures/service.ts';
import { appendAudit, cliActor } from '../../services/audit/log.ts';
import { printJson, withCaptures, type CaptureTools } from '../context.ts';
import { terminalText } from '../terminal-text.ts';
import { progressLine, summary } from '../views/capture-text.ts';

interface IngestOptions {
  wait?: boolean;
  json?: boolean;
  force?: boolean;
}

/**
 * How often --wait reads the capture's state (one indexed read each) when no write was heard: on
 * SQLite it also reads within 10 ms of another process's commit (db/write-watch.ts), so it sees the
 * end right after rigd serve records it.
 */
const POLL_MS = 50;
/** With --wait, say once that nothing has picked the job up after this long (is rigd serve running?). */
const HINT_AFTER_MS = 5000;

/** The capture ended failed: the command exits 1 with this one line. */
class CaptureFailed extends DomainError {
  constructor(c: CaptureView) {
    super('unprocessable', 'capture_failed', `capture ${c.id} failed: ${summary(c)}`);
  }
}

/** The operator quit the progress view (Ctrl-C) before the end: exit 1, the job goes on. */
class StoppedWaiting extends DomainError {
  constructor(c: CaptureView) {
    super('unprocessable', 'stopped_waiting', `stopped waiting: capture ${c.id} is still ${c.state} (see rigd captures)`);
  }
}

/** --wait on a terminal: a live progress bar (Ink) until the capture is ingested or failed. */
async function waitWithBar(app: CaptureTools, capture: CaptureView): Promise<CaptureView> {
  const { waitIngest } = await import('../views/launch.tsx');
  let final = capture;
  const hint = setTimeout(() => {
    if (final.state === 'queued' && final.attempts === 0) {
      process.stderr.write('rigd: still waiting: rigd serve ingests queued captures; is it running on this data_dir?\n');
    }
  }, HINT_AFTER_MS);
  try {
    const load = async () => (final = await app.captures.get(capture.id));
    await waitIngest({ load, intervalMs: POLL_MS, onDone: (c) => (final = c) });
  } finally {
    clearTimeout(hint);
  }
  return final;
}

/**
 * `rigd ingest URL|KEY [--force] [--wait] [--json]`: queues a capture file through the same service
 * as the webhook (a failed capture of the same version is queued again; with --force an ingested one
 * too, its rows replaced in the capture store). `rigd serve` ingests it; --wait prints progress until
 * it is ingested (exit 0) or failed (exit 1).
 */
export async function ingestCommand(target: string, opts: IngestOptions, cmd: Command): Promise<void> {
  const out = (line: string) => {
    if (!opts.json) process.stdout.write(`${terminalText(line)}\n`);
  };
  const final = await withCaptures(cmd, async (app) => {
    const q = await app.captures.queueTarget(target, { retryFailed: true, force: opts.force === true });
    await appendAudit(app.db, { kind: opts.force === true ? 'ingest.forced' : 'ingest.triggered', actor: cliActor(), subject: q.capture.key, details: { capture: q.capture.id, queued: q.enqueued } });
    let c = q.capture;
    const what = `capture ${c.id} (${c.key})`;
    const hint = c.state === 'ingested' ? ' (--force imports it again)' : '';
    out(q.enqueued ? `${what} queued${q.created ? '' : ' again'}` : `${what} is already ${c.state}${hint}`);
    if (!opts.wait) return c;
    if (!opts.json && process.stdout.isTTY) return waitWithBar(app, c);
    const started = Date.now();
    let last = '';
    let hinted = false;
    const writes = writeWaiter(app.db, app.dataDir);
    try {
      while (c.state === 'queued' || c.state === 'ingesting') {
        const line = c.state === 'queued' ? (c.last_error ? `queued (retrying after: ${summary(c)})` : 'queued') : progressLine(c);
        if (line !== last) out(`capture ${c.id}: ${line}`);
        last = line;
        if (!hinted && c.state === 'queued' && c.attempts === 0 && Date.now() - started > HINT_AFTER_MS) {
          hinted = true;
          process.stderr.write('rigd: still waiting: rigd serve ingests queued captures; is it running on this data_dir?\n');
        }
        await writes.next(POLL_MS);
        c = await app.captures.get(c.id);
      }
    } finally {
      writes.stop();
    }
    return c;
  });
  if (opts.json) printJson(final);
  if (!opts.wait) return;
  if (final.state === 'failed') throw new CaptureFailed(final);
  if (final.state !== 'ingested') throw new StoppedWaiting(final);
  out(`capture ${final.id} ingested: ${summary(final)}, sha256 ${final.sha256}`);
}
