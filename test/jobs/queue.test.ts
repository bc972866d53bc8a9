import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { getJob, listJobs, queueDepth } from '../../src/jobs/read.ts';
import { enqueue } from '../../src/jobs/enqueue.ts';
import { JobRunner, type RunnerLogger } from '../../src/jobs/runner.ts';
import { rejects } from '../helpers/assert.ts';
import { sleep, tempDataDir, waitFor } from '../helpers/jobs.ts';
import { withDb } from '../helpers/dialect.ts';

function capturingLogger(errors: string[]): RunnerLogger {
  return {
    info() {},
    warn: (msg, f) => errors.push(`${msg} ${JSON.stringify(f)}`),
    error: (msg, f) => errors.push(`${msg} ${JSON.stringify(f)}`),
  };
}

test('enqueue commits and rolls back with the caller\'s transaction', async (t) => {
  const db = await openDatabase(...withDb(tempDataDir()));
  try {
    await rejects(
      t,
      db.writes.run(async (transaction) => {
        await enqueue('capture', { key: 'a.sqlite' }, { transaction });
        throw new Error('the capture row failed');
      }),
      /the capture row failed/,
      'the caller\'s transaction fails',
    );
    t.equal(await db.models.Job.count(), 0, 'no job after a rollback');

    const job = await db.writes.run((transaction) => enqueue('capture', { key: 'b.sqlite' }, { transaction, maxAttempts: 3 }));
    t.equal(await db.models.Job.count(), 1, 'a job after a commit');
    t.deepEqual(
      { state: job.state, attempts: job.attempts, maxAttempts: job.maxAttempts, payload: job.payload },
      { state: 'queued', attempts: 0, maxAttempts: 3, payload: { key: 'b.sqlite' } },
      'enqueue returns the queued job',
    );
    await rejects(t, enqueue('capture', {}, {} as never), /transaction/, 'a transaction is required');
  } finally {
    await db.close();
  }
});

test('read API: getJob, listJobs, queueDepth', async (t) => {
  const db = await openDatabase(...withDb(tempDataDir()));
  try {
    const ids = await db.writes.run(async (transaction) => {
      const out: number[] = [];
      for (let i = 0; i < 5; i++) out.push((await enqueue(i < 3 ? 'a' : 'b', { i }, { transaction })).id);
      return out;
    });
    await db.writes.run((transaction) => db.models.Job.update({ state: 'done' }, { where: { id: ids[0] }, transaction }));
    t.deepEqual((await getJob(db, ids[1]))?.payload, { i: 1 }, 'getJob parses the payload');
    t.equal(await getJob(db, 9999), null, 'getJob of an unknown id is null');
    t.deepEqual((await listJobs(db)).map((j) => j.id), [...ids].reverse(), 'newest first');
    t.deepEqual((await listJobs(db, { kind: 'a', state: 'queued' })).map((j) => j.id), [ids[2], ids[1]], 'filtered by kind and state');
    t.equal((await listJobs(db, { limit: 2 })).length, 2, 'limit');
    t.deepEqual(await queueDepth(db), { queued: 4, running: 0, done: 1, failed: 0 }, 'depth by state');
    t.deepEqual(await queueDepth(db, 'b'), { queued: 2, running: 0, done: 0, failed: 0 }, 'depth of one kind');
  } finally {
    await db.close();
  }
});

test('50 jobs enqueued at once: concurrency honoured, each done exactly once, no errors', async (t) => {
  const db = await openDatabase(...withDb(tempDataDir()));
  const errors: string[] = [];
  const runner = new JobRunner(db, { concurrency: 3, logger: capturingLogger(errors) });
  const calls = new Map<number, number>();
  let active = 0;
  let maxActive = 0;
  // The first handlers hold on until three run at once (a busy machine claims slowly: jobs of a few
  // milliseconds might never overlap), for 60 s at most: a runner that never runs three gives up the wait once.
  let waitForThree = true;
  runner.handle('work', async (job, ctx) => {
    calls.set(job.id, (calls.get(job.id) ?? 0) + 1);
    active++;
    maxActive = Math.max(maxActive, active);
    try {
      ctx.progress({ step: 'work', bytes: job.id });
      if (waitForThree) await waitFor(() => maxActive >= 3, 60_000, 'three handlers at once').catch(() => undefined);
      waitForThree = false;
      await sleep(5 + Math.random() * 20);
    } finally {
      active--;
    }
  });
  try {
    await runner.start();
    // 50 separate transactions at once, competing with the runner's own writes.
    const jobs = await Promise.all(
      Array.from({ length: 50 }, (_, i) => db.writes.run((transaction) => enqueue('work', { i }, { transaction }))),
    );
    await waitFor(async () => (await queueDepth(db)).done === 50, 60_000, '50 jobs done');
    t.ok(maxActive <= 3, `never more than 3 handlers at once (saw ${maxActive})`);
    t.equal(maxActive, 3, 'the runner does use all 3 slots');
    t.equal(calls.size, 50, 'every job ran');
    t.ok(
      jobs.every((j) => calls.get(j.id) === 1),
      'each job ran exactly once',
    );
    const rows = await listJobs(db, { limit: 100 });
    t.ok(
      rows.every((j) => j.state === 'done' && j.attempts === 1 && j.leaseOwner === null && j.finishedAt !== null),
      'all done on the first attempt, leases cleared',
    );
    t.deepEqual(errors, [], 'no errors or warnings (no SQLITE_BUSY)');
  } finally {
    await runner.stop({ timeoutMs: 1000 });
    await db.close();
  }
});

test('a runner claims only the kinds it handles', async (t) => {
  const db = await openDatabase(...withDb(tempDataDir()));
  const runner = new JobRunner(db, { pollMs: 50 });
  const seen: string[] = [];
  runner.handle('mine', async (job) => void seen.push(job.kind));
  try {
    await db.writes.run(async (transaction) => {
      await enqueue('other', {}, { transaction });
      await enqueue('mine', {}, { transaction });
    });
    await runner.start();
    await waitFor(async () => (await queueDepth(db)).done === 1, 60_000, 'mine done');
    await sleep(200);
    t.deepEqual(seen, ['mine'], 'only its own kind ran');
    t.deepEqual(await queueDepth(db, 'other'), { queued: 1, running: 0, done: 0, failed: 0 }, 'the other job is untouched');
  } finally {
    await runner.stop();
    await db.close();
  }
});

test('progress is visible while running and written at most twice a second', async (t) => {
  const db = await openDatabase(...withDb(tempDataDir()));
  const runner = new JobRunner(db, { pollMs: 50 });
  let midway: unknown = null;
  let ranMs = 0;
  runner.handle('work', async (job, ctx) => {
    const began = Date.now();
    for (let i = 1; i <= 100; i++) {
      ctx.progress({ step: 'download', bytes: i * 1000 });
      await sleep(10);
      if (i === 80) midway = (await getJob(db, job.id))?.progress;
    }
    ranMs = Date.now() - began;
  });
  const job = await db.writes.run((transaction) => enqueue('work', {}, { transaction }));
  const run = db.writes.run.bind(db.writes);
  let writes = 0;
  db.writes.run = (fn) => (writes++, run(fn));
  try {
    await runner.start();
    await waitFor(async () => (await getJob(db, job.id))?.state === 'done', 60_000, 'job done');
    const done = await getJob(db, job.id);
    t.ok(midway && (midway as { step: string }).step === 'download', `progress readable mid-job: ${JSON.stringify(midway)}`);
    t.deepEqual(done?.progress, { step: 'download', bytes: 100_000 }, 'the last report is kept');
    // claim + complete + progress writes at <= 2/s over the run (~1.1 s; longer on a busy machine:
    // its own length counts), one of which may start at once.
    const most = 2 + 1 + Math.ceil((2 * ranMs) / 1000);
    t.ok(writes <= most, `few writes for 100 reports (saw ${writes}; at most ${most} for ${ranMs} ms of work)`);
    t.ok(writes >= 3, 'some progress was written during the run');
  } finally {
    await runner.stop();
    await db.close();
  }
});
