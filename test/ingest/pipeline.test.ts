// test: alone (a backoff read from rows written under load)
// The capture state machine through the ingester's pipeline (fetch -> inspect -> import -> record),
// with a stand-in import step at its one call site: queued -> ingesting (progress in bytes, then
// rows) -> ingested with the summaries the import returned; an import refusing the file fails it
// for good with its code; an import failing otherwise is retried with backoff (queued again,
// import_error) and fails once no attempt is left. The capture row never holds run state.
import path from 'node:path';
import test from 'tape';
import type { CaptureTableSummary } from '../../src/db/capture-store/layout.ts';
import { CaptureRejected } from '../../src/ingest/capture-rejected.ts';
import { CaptureWorker } from '../../src/ingest/capture-worker.ts';
import { inspectCapture } from '../../src/ingest/capture-file.ts';
import type { ImportStep } from '../../src/ingest/import-step.ts';
import { silentLogger } from '../../src/log.ts';
import { openApp, type App } from '../../src/services/app.ts';
import { putFile, settled } from '../helpers/captures.ts';
import { makeCapture } from '../helpers/capture-files.ts';
import { waitFor } from '../helpers/jobs.ts';
import { testConfig } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';

const files = tmpDir();
const BASE_MS = 100;
const RETRY_MS = 3000;

async function setup(importStep: ImportStep, maxAttempts = 3, baseMs = BASE_MS): Promise<{ app: App; worker: CaptureWorker; id: number }> {
  const app = await openApp(testConfig({ ingest: { max_attempts: maxAttempts } }));
  const worker = new CaptureWorker(app.db, app.storage, app.config, silentLogger, { pollMs: 50, progressIntervalMs: 10, backoff: { baseMs, jitter: 0 } }, importStep);
  const file = path.join(files, `c-${Math.random().toString(16).slice(2)}.sqlite`);
  await makeCapture(file, { tables: [{ name: 'fixes', columns: [{ name: 'at', type: 'TEXT' }], rows: 50 }] });
  await putFile(app, 'rig1/c.sqlite', file);
  const q = await app.captures.queueTarget('rig1/c.sqlite');
  return { app, worker, id: q.capture.id };
}

test('queued -> ingesting (bytes, then rows) -> ingested with what the import returned, recorded with the job', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const calls: { captureId: number; tables: string[] }[] = [];
  const summaries: CaptureTableSummary[] = [
    { name: 'fixes', columns: [{ name: 'at', type: 'TEXT' }], rows: 50, time_column: 'at', first: '2026-11-20T10:00:00.000Z', last: '2026-11-20T11:00:00.000Z' },
  ];
  const { app, worker, id } = await setup(async (file, captureId, opts) => {
    const info = await inspectCapture(file, { maxBytes: 1 << 30, timeoutMs: opts.timeoutMs, signal: opts.signal });
    calls.push({ captureId, tables: info.tables.map((x) => x.name) });
    opts.onProgress({ rows: 20, bytes: 1000 });
    await gate;
    return { info, tables: summaries };
  });
  try {
    const queued = await app.captures.get(id);
    t.deepEqual([queued.state, queued.attempts, queued.progress, queued.started_at], ['queued', 0, null, null], 'queued, not started');
    const repeat = await app.captureNotices.notify({ url: app.storage.objectUrl('rig1/c.sqlite') }, 'user');
    t.deepEqual([repeat.queued, repeat.capture, repeat.reason], [true, { id, state: 'queued' }, undefined], 'a webhook for the already-queued capture: queued true, its capture');
    t.equal(await app.db.models.Job.count(), 1, 'no second job');
    await worker.start();
    const importing = await waitFor(async () => {
      const c = await app.captures.get(id);
      return c.progress?.step === 'import' && c.progress.rows === 20 ? c : null;
    }, 60_000, 'the import to report rows');
    t.deepEqual([importing.state, importing.attempts], ['ingesting', 1], 'ingesting, attempt 1');
    t.ok(importing.started_at, 'started_at from the job');
    t.equal(importing.sha256, null, 'no results before the record step');
    t.deepEqual((await app.captures.list({ state: 'ingesting' })).captures.map((c) => c.id), [id], 'listed as ingesting (through the join)');
    release();
    const done = await settled(app, id);
    t.equal(done.state, 'ingested', 'ingested');
    t.deepEqual(done.tables, summaries, 'the import\'s summaries recorded on the capture');
    t.deepEqual(calls, [{ captureId: id, tables: ['fixes'] }], 'the import step called once, with the capture and the inspected tables');
    t.equal(done.progress?.rows, 50, 'progress ends with the rows imported');
    t.ok(done.sha256 && done.page_size, 'sha256 and pages recorded');
    const row = (await app.db.models.Capture.findByPk(id))!.get({ plain: true }) as Record<string, unknown>;
    t.notOk('state' in row || 'attempts' in row || 'last_error' in row, 'the capture row holds no run state');
  } finally {
    release();
    await worker.stop();
    await app.close();
  }
});

test('an import that refuses the file: failed for good with its code, one attempt', async (t) => {
  const { app, worker, id } = await setup(async () => {
    throw new CaptureRejected('unsupported_schema', 'a capture column named capture_id is not supported');
  });
  try {
    await worker.start();
    const c = await settled(app, id);
    t.deepEqual([c.state, c.error_code, c.attempts, c.last_error], ['failed', 'unsupported_schema', 1, 'a capture column named capture_id is not supported'], 'failed: unsupported_schema');
    t.deepEqual([c.sha256, c.tables], [null, null], 'no results recorded');
  } finally {
    await worker.stop();
    await app.close();
  }
});

test('an import that fails otherwise: queued again with import_error after backoff, failed when no attempt is left', async (t) => {
  let n = 0;
  const thrownAt: number[] = [];
  const { app, worker, id } = await setup(async (_file, _captureId, opts) => {
    n++;
    opts.onStep('import');
    thrownAt.push(Date.now());
    throw new Error(`capture store busy (${n})`);
    // A backoff long enough that a busy machine's polls see the job queued between the attempts.
  }, 2, RETRY_MS);
  try {
    await worker.start();
    const retrying = await waitFor(async () => {
      const c = await app.captures.get(id);
      return c.state === 'queued' && c.attempts === 1 ? c : null;
    }, 60_000, 'the first failure');
    t.deepEqual([retrying.error_code, retrying.last_error], ['import_error', 'capture store busy (1)'], 'queued again with the error and its code');
    // The retry is written after the import step threw, so run_after - that moment is at least the
    // backoff whatever the load (not updated_at: this process stamps it after the write transaction
    // began, and on PostgreSQL run_after counts from that start; a loaded machine puts any gap
    // between the two).
    const job = await app.db.models.Job.findByPk(retrying.job_id!);
    const waited = job ? job.run_after.getTime() - thrownAt[0]! : NaN;
    t.ok(waited >= RETRY_MS, `retried after the backoff (run_after ${waited} ms after the first attempt failed)`);
    const c = await settled(app, id);
    t.deepEqual([c.state, c.error_code, c.attempts], ['failed', 'import_error', 2], 'failed after 2 attempts, import_error');
    t.equal(c.last_error, 'gave up after 2 attempts: capture store busy (2)', 'with the last error');
    t.ok(c.finished_at, 'finished_at');
  } finally {
    await worker.stop();
    await app.close();
  }
});
