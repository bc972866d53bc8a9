// test: alone (jobs from another process completed within 5 s)
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { getJob, queueDepth } from '../../src/jobs/read.ts';
import { enqueue } from '../../src/jobs/enqueue.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { enqueueFromChild, readRecords, recordingHandler, sleep, spawnWorker, tempDataDir, waitFor } from '../helpers/jobs.ts';
import { testDb } from '../helpers/dialect.ts';

function countBy(records: { id: number }[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const r of records) counts.set(r.id, (counts.get(r.id) ?? 0) + 1);
  return counts;
}

test('a node\'s runner killed with SIGKILL mid-job: once its heartbeats stop, another node reclaims it and it completes exactly once', async (t) => {
  const dataDir = tempDataDir();
  const db = await openDatabase(dataDir, testDb(dataDir));
  const runner = new JobRunner(db, { pollMs: 100, progressIntervalMs: 100, node: 'gw-b', nodeStaleMs: 1000 });
  try {
    const { id } = await db.writes.run((transaction) => enqueue('work', { key: 'capture.sqlite' }, { transaction }));
    // A long lease: recovery must come from the registry (the node's heartbeats stopped), not from expiry.
    const worker = spawnWorker({ dataDir, jobMs: 4000, leaseMs: 60_000, node: 'gw-a' });
    const owner = await worker.ready;
    t.equal(await worker.nextStart(), id, 'the child started the job');
    await waitFor(async () => ((await getJob(db, id))?.progress?.bytes ?? 0) >= 2, 60_000, 'progress from the child');
    worker.child.kill('SIGKILL');
    t.equal((await worker.exited).signal, 'SIGKILL', 'the child was killed mid-job');

    const orphan = await getJob(db, id);
    t.deepEqual(
      { state: orphan?.state, owner: orphan?.leaseOwner, completions: readRecords(dataDir, 'completions').length },
      { state: 'running', owner, completions: 0 },
      'the job was left running under the dead child\'s lease, not completed',
    );

    runner.handle('work', recordingHandler(dataDir, 300));
    const began = Date.now();
    await runner.start();
    await waitFor(async () => (await getJob(db, id))?.state === 'done', 60_000, 'the reclaimed job to complete');
    t.comment(`reclaimed and completed ${Date.now() - began} ms after the new runner started (lease was 60 s)`);
    const job = await getJob(db, id);
    t.equal(job?.attempts, 2, 'two attempts: the killed one and the completed one');
    t.deepEqual(readRecords(dataDir, 'starts').map((r) => r.id), [id, id], 'started in the child, then again after the crash');
    t.deepEqual(readRecords(dataDir, 'completions'), [{ id, pid: process.pid }], 'exactly one completion, by the new runner');
  } finally {
    await runner.stop();
    await db.close();
  }
});

test('two runners in two processes on one database: every job done exactly once', async (t) => {
  const dataDir = tempDataDir();
  const db = await openDatabase(dataDir, testDb(dataDir));
  const workers = [spawnWorker({ dataDir, concurrency: 2, jobMs: 100 }), spawnWorker({ dataDir, concurrency: 2, jobMs: 100 })];
  try {
    await Promise.all(workers.map((w) => w.ready));
    const ids: number[] = [];
    for (let i = 0; i < 40; i++) ids.push((await db.writes.run((transaction) => enqueue('work', { i }, { transaction }))).id);
    await waitFor(async () => (await queueDepth(db)).done === 40, 60_000, '40 jobs done', 100);
    const completions = readRecords(dataDir, 'completions');
    const starts = countBy(readRecords(dataDir, 'starts'));
    const done = countBy(completions);
    t.ok(ids.every((id) => done.get(id) === 1), 'each job completed exactly once');
    t.ok(ids.every((id) => starts.get(id) === 1), 'each job was started exactly once (never claimed twice)');
    t.equal(completions.length, 40, 'no other completions');
    const byPid = countBy(completions.map((c) => ({ id: c.pid })));
    t.comment(`jobs per worker: ${[...byPid.values()].join(' + ')}`);
    t.equal(byPid.size, 2, 'both processes ran jobs');
    t.deepEqual(await queueDepth(db), { queued: 0, running: 0, done: 40, failed: 0 }, 'nothing left');
  } finally {
    for (const w of workers) w.child.kill('SIGTERM');
    const exits = await Promise.all(workers.map((w) => w.exited));
    t.deepEqual(exits.map((e) => e.code), [0, 0], 'both workers stopped cleanly on SIGTERM');
    await db.close();
  }
});

test('a job queued by another process is picked up by polling', async (t) => {
  const dataDir = tempDataDir();
  const db = await openDatabase(dataDir, testDb(dataDir));
  const startedAt = new Map<number, number>();
  const runner = new JobRunner(db); // default poll interval (1 s)
  runner.handle('work', async (job) => void startedAt.set(job.id, Date.now()));
  const latencies: number[] = [];
  try {
    await runner.start();
    for (let round = 0; round < 5; round++) {
      await sleep(Math.random() * 1000); // land at different points of the poll cycle
      const { ids, committedAt } = await enqueueFromChild(dataDir, 'work', 1);
      await waitFor(async () => (await getJob(db, ids[0]))?.state === 'done', 60_000, `job ${ids[0]} done`, 50);
      latencies.push(startedAt.get(ids[0])! - committedAt);
    }
    t.comment(`pick-up latency after commit in another process: ${latencies.join(', ')} ms (max ${Math.max(...latencies)})`);
    t.equal(latencies.length, 5, 'every job from the other process completed');
    // One poll (1 s) after the commit, and the claim: judged by the median, since a busy machine can
    // hold one of them back; a runner that did not poll would never start them.
    const median = [...latencies].sort((a, b) => a - b)[2]!;
    t.ok(median < 3000, `started within three poll intervals (median ${median} ms)`);
  } finally {
    await runner.stop();
    await db.close();
  }
});
