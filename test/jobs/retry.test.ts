// test: alone (a held slot released within 5 s)
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { backoffMs } from '../../src/jobs/backoff.ts';
import { PermanentJobError } from '../../src/jobs/errors.ts';
import { getJob } from '../../src/jobs/read.ts';
import type { JobInfo } from '../../src/jobs/job.ts';
import { enqueue } from '../../src/jobs/enqueue.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { sleep, tempDataDir, WAIT_MS, waitFor } from '../helpers/jobs.ts';
import { withDb } from '../helpers/dialect.ts';

test('backoffMs: base * 2^(attempts-1), capped, with jitter on top', (t) => {
  const opts = { baseMs: 100, maxMs: 1000, jitter: 0.1 };
  const none = () => 0;
  t.deepEqual([1, 2, 3, 4, 5, 6].map((a) => backoffMs(a, opts, none)), [100, 200, 400, 800, 1000, 1000], 'doubles, then capped');
  t.equal(backoffMs(2, opts, () => 1), 220, 'at most 10% jitter added');
  t.equal(backoffMs(1000, opts, none), 1000, 'huge attempt counts stay capped');
  t.equal(backoffMs(1, {}, none), 5000, 'default base 5 s');
  t.end();
});

async function finished(db: Awaited<ReturnType<typeof openDatabase>>, id: number, timeoutMs = WAIT_MS): Promise<JobInfo> {
  return waitFor(async () => {
    const job = await getJob(db, id);
    return job && (job.state === 'done' || job.state === 'failed') ? job : null;
  }, timeoutMs, `job ${id} to finish`);
}

test('a transient failure is retried with exponential backoff, then succeeds', async (t) => {
  const db = await openDatabase(...withDb(tempDataDir()));
  const baseMs = 150;
  const runner = new JobRunner(db, { pollMs: 20, backoff: { baseMs, jitter: 0 } });
  const seen: { attempts: number; at: number; runAfter: number; lastError: string | null }[] = [];
  runner.handle('flaky', async (job) => {
    seen.push({ attempts: job.attempts, at: Date.now(), runAfter: job.runAfter.getTime(), lastError: job.lastError });
    if (job.attempts <= 3) throw new Error(`storage unavailable (attempt ${job.attempts})`);
  });
  try {
    await runner.start();
    const { id } = await db.writes.run((transaction) => enqueue('flaky', {}, { transaction, maxAttempts: 5 }));
    const job = await finished(db, id);
    t.equal(job.state, 'done', 'done in the end');
    t.equal(job.attempts, 4, 'four attempts');
    t.deepEqual(seen.map((s) => s.attempts), [1, 2, 3, 4], 'attempt counter seen by the handler');
    t.equal(seen[3].lastError, 'storage unavailable (attempt 3)', 'the last error is kept on the job');
    const runAfters = seen.map((s) => s.runAfter);
    t.ok(runAfters.every((r, i) => i === 0 || r > runAfters[i - 1]), 'run_after moves forward on each failure');
    const gaps = seen.slice(1).map((s, i) => s.at - seen[i].at);
    t.comment(`gaps between attempts: ${gaps.join(', ')} ms (backoff ${baseMs}, ${baseMs * 2}, ${baseMs * 4})`);
    // At least the backoff (doubling each time: exponential); a busy machine adds its own delay to
    // the poll and the claim on top, hence the slack of the upper bound.
    t.ok(gaps.every((g, i) => g >= baseMs * 2 ** i), 'each retry waits at least base * 2^(attempts-1)');
    t.ok(gaps.every((g, i) => g < baseMs * 2 ** i + 5000), 'and is not held back much longer');
  } finally {
    await runner.stop();
    await db.close();
  }
});

test('a job failing on every attempt ends failed with the last error', async (t) => {
  const db = await openDatabase(...withDb(tempDataDir()));
  const runner = new JobRunner(db, { pollMs: 20, backoff: { baseMs: 10, jitter: 0 } });
  let calls = 0;
  runner.handle('broken', async (job) => {
    calls++;
    throw new Error(`connection reset (attempt ${job.attempts})`);
  });
  try {
    await runner.start();
    const { id } = await db.writes.run((transaction) => enqueue('broken', {}, { transaction, maxAttempts: 3 }));
    const job = await finished(db, id);
    t.equal(job.state, 'failed', 'failed');
    t.equal(job.attempts, 3, 'after max_attempts attempts');
    t.equal(calls, 3, 'the handler ran 3 times');
    t.match(job.lastError ?? '', /gave up after 3 attempts: connection reset \(attempt 3\)/, 'with the last error');
    t.ok(job.finishedAt && job.leaseOwner === null, 'finished, lease cleared');
    await sleep(150);
    t.equal(calls, 3, 'never run again');
  } finally {
    await runner.stop();
    await db.close();
  }
});

test('PermanentJobError fails the job at once', async (t) => {
  const db = await openDatabase(...withDb(tempDataDir()));
  const runner = new JobRunner(db, { pollMs: 20, backoff: { baseMs: 10, jitter: 0 } });
  let calls = 0;
  runner.handle('bad', async () => {
    calls++;
    throw new PermanentJobError('not an SQLite database');
  });
  try {
    await runner.start();
    const { id } = await db.writes.run((transaction) => enqueue('bad', {}, { transaction, maxAttempts: 5 }));
    const job = await finished(db, id);
    await sleep(150);
    t.deepEqual(
      { state: job.state, attempts: job.attempts, lastError: job.lastError, calls },
      { state: 'failed', attempts: 1, lastError: 'not an SQLite database', calls: 1 },
      'failed after one attempt with the reason',
    );
  } finally {
    await runner.stop();
    await db.close();
  }
});

test('a job past its time bound is aborted and counts as a transient failure', async (t) => {
  const db = await openDatabase(...withDb(tempDataDir()));
  const runner = new JobRunner(db, { pollMs: 20, jobTimeoutMs: 200, abortGraceMs: 300, backoff: { baseMs: 10, jitter: 0 } });
  const reasons: string[] = [];
  runner.handle('slow', async (job, ctx) => {
    if (job.attempts === 1) {
      try {
        await sleep(10_000, ctx.signal); // honours the signal
      } catch (err) {
        reasons.push((err as Error).name);
        throw err;
      }
    }
    // Ignores the signal: given up after the grace (an unref'd timer: it does not hold the process).
    if (job.attempts === 2) await new Promise((resolve) => setTimeout(resolve, 60_000).unref());
  });
  try {
    await runner.start();
    const started = Date.now();
    const { id } = await db.writes.run((transaction) => enqueue('slow', {}, { transaction, maxAttempts: 3 }));
    const job = await finished(db, id);
    t.deepEqual(reasons, ['JobTimeoutError'], 'the handler saw the timeout on its signal');
    t.equal(job.state, 'done', 'retried and done on the third attempt');
    t.equal(job.attempts, 3, 'the timeouts counted as attempts');
    t.match(job.lastError ?? '', /timed out after 200 ms/, 'the timeout is the last error');
    t.ok(Date.now() - started < 30_000, `a handler ignoring its signal (for 60 s) did not hold the slot (${Date.now() - started} ms)`);

    const { id: id2 } = await db.writes.run((transaction) => enqueue('slow', {}, { transaction, maxAttempts: 1 }));
    const job2 = await finished(db, id2);
    t.equal(job2.state, 'failed', 'with no attempt left, a timeout fails the job');
    t.match(job2.lastError ?? '', /gave up after 1 attempts: job timed out/, 'with the reason');
  } finally {
    await runner.stop({ timeoutMs: 100 });
    await db.close();
  }
});
