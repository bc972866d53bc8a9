// test: alone (stop keeps its bound under 1.5 s)
import test from 'tape';
import { openDatabase, type Database } from '../../src/db/index.ts';
import { getJob } from '../../src/jobs/read.ts';
import { enqueue } from '../../src/jobs/enqueue.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { sleep, tempDataDir, waitFor } from '../helpers/jobs.ts';
import { withDb } from '../helpers/dialect.ts';

/** Puts a job in the state a runner would leave it in while running it. */
async function markRunning(db: Database, id: number, owner: string, expiresInMs: number, attempts = 1): Promise<void> {
  await db.writes.run((transaction) =>
    db.models.Job.update(
      { state: 'running', lease_owner: owner, lease_expires_at: new Date(Date.now() + expiresInMs), attempts },
      { where: { id }, transaction },
    ),
  );
}

async function queued(db: Database, maxAttempts = 5): Promise<number> {
  return (await db.writes.run((transaction) => enqueue('work', {}, { transaction, maxAttempts }))).id;
}

/** Registers node `id` (its heartbeat `ageMs` old, or stopped) as the registry would hold it. */
async function registered(db: Database, id: string, ageMs: number, opts: { stopped?: boolean; startedAgoMs?: number } = {}): Promise<void> {
  const now = Date.now();
  await db.writes.run((transaction) =>
    db.models.Node.create(
      {
        instance_id: id,
        run_id: `run-${id}`,
        hostname: 'gateway',
        pid: 1,
        version: '0.1.0',
        started_at: new Date(now - (opts.startedAgoMs ?? 120_000)),
        heartbeat_at: new Date(now - ageMs),
        stopped_at: opts.stopped ? new Date(now) : null,
      },
      { transaction },
    ),
  );
}

test('jobs of a node the registry knows dead (stopped, silent, restarted) are reclaimed at once; live, unknown or foreign leases wait', async (t) => {
  const db = await openDatabase(...withDb(tempDataDir()));
  const ran: number[] = [];
  // A node is silent after 60 s without a heartbeat: gw-live's one heartbeat (written at the
  // start, never again) must keep it live however long a busy machine takes over this test.
  const runner = new JobRunner(db, { pollMs: 50, nodeStaleMs: 60_000 });
  runner.handle('work', async (job) => void ran.push(job.id));
  try {
    const silent = await queued(db);
    const silentOnLastAttempt = await queued(db, 2);
    const stopped = await queued(db);
    const restarted = await queued(db);
    const live = await queued(db);
    const unknown = await queued(db);
    const noNode = await queued(db);
    // Every node: host name "gateway", pid 1 (containers); only the registry tells them apart.
    await registered(db, 'gw-silent', 600_000, { startedAgoMs: 3_600_000 });
    await registered(db, 'gw-stopped', 0, { stopped: true });
    await registered(db, 'gw-restarted', 0, { startedAgoMs: 0 });
    await registered(db, 'gw-live', 0);
    // Leases of 10 minutes: whatever is reclaimed here is reclaimed by the registry, not by expiry.
    await markRunning(db, silent, 'gw-silent/aa11', 600_000);
    await markRunning(db, silentOnLastAttempt, 'gw-silent/bb22', 600_000, 2);
    await markRunning(db, stopped, 'gw-stopped/cc33', 600_000);
    await markRunning(db, live, 'gw-live/dd44', 600_000);
    await markRunning(db, unknown, 'gw-unknown/ee55', 600_000);
    await markRunning(db, noNode, '/ff66', 600_000);
    // Claimed a minute ago, before the node's current run started.
    await db.writes.run((transaction) =>
      db.models.Job.update({ state: 'running', lease_owner: 'gw-restarted/aa77', lease_expires_at: new Date(Date.now() + 600_000), attempts: 1, started_at: new Date(Date.now() - 60_000) }, { where: { id: restarted }, transaction }),
    );
    await runner.start();
    for (const id of [silent, stopped, restarted]) await waitFor(async () => (await getJob(db, id))?.state === 'done', 60_000, `reclaimed job ${id} done`);
    await sleep(300);
    const d = await getJob(db, silent);
    t.equal(d?.attempts, 2, 'attempts kept across the reclaim (1 before, 1 now)');
    t.match(d?.lastError ?? '', /lease of gw-silent\/aa11 lost \(node gw-silent silent for \d+ s\)/, `the reclaim is recorded as the last error: ${d?.lastError}`);
    t.match((await getJob(db, stopped))?.lastError ?? '', /node gw-stopped stopped/, 'a stopped node\'s job: reclaimed');
    t.match((await getJob(db, restarted))?.lastError ?? '', /node gw-restarted restarted since the claim/, 'a job claimed before its node restarted: reclaimed');
    const last = await getJob(db, silentOnLastAttempt);
    t.equal(last?.state, 'failed', 'a job whose runner died on its last attempt fails');
    t.match(last?.lastError ?? '', /gave up after 2 attempts/, 'with the reason');
    t.equal((await getJob(db, live))?.state, 'running', 'a lease of a live node (same host name and pid as the others) waits for its expiry');
    t.equal((await getJob(db, unknown))?.state, 'running', 'a lease of a node not in the registry waits for its expiry');
    t.equal((await getJob(db, noNode))?.state, 'running', 'a lease of a runner outside any node waits for its expiry');
    t.deepEqual(ran.sort((x, y) => x - y), [silent, stopped, restarted].sort((x, y) => x - y), 'only the reclaimed jobs ran');
  } finally {
    await runner.stop();
    await db.close();
  }
});

test('an expired lease makes a running job claimable again', async (t) => {
  const db = await openDatabase(...withDb(tempDataDir()));
  const starts: number[] = [];
  const runner = new JobRunner(db, { pollMs: 50 });
  runner.handle('work', async () => void starts.push(Date.now()));
  try {
    const id = await queued(db);
    const expiresAt = Date.now() + 600;
    await markRunning(db, id, 'another-gateway/4242/ee55', 600);
    await runner.start();
    await waitFor(async () => (await getJob(db, id))?.state === 'done', 60_000, 'job done');
    t.equal(starts.length, 1, 'ran once');
    t.ok(starts[0] >= expiresAt, `not before the lease expired (${starts[0] - expiresAt} ms after)`);
    t.equal((await getJob(db, id))?.attempts, 2, 'the lost run counts as an attempt');
  } finally {
    await runner.stop();
    await db.close();
  }
});

test('leases are renewed while a job runs: a second runner does not take it', async (t) => {
  const db = await openDatabase(...withDb(tempDataDir()));
  const calls: string[] = [];
  // A lease of 3 s, renewed every third of it: a busy machine can hold a timer or a write back for
  // a second or more, and what is tested is the renewal, not how short a lease can be.
  const a = new JobRunner(db, { pollMs: 20, leaseMs: 3000 });
  const b = new JobRunner(db, { pollMs: 20, leaseMs: 3000 });
  let leaseSeen: Date | null = null;
  let claimedLease: Date | null = null;
  for (const [name, r] of [['a', a], ['b', b]] as const) {
    r.handle('work', async (job) => {
      calls.push(name);
      claimedLease = job.leaseExpiresAt;
      await sleep(12_000);
      leaseSeen = (await getJob(db, job.id))?.leaseExpiresAt ?? null;
    });
  }
  try {
    const id = await queued(db);
    await a.start();
    await b.start();
    await waitFor(async () => (await getJob(db, id))?.state === 'done', 60_000, 'job done');
    t.equal(calls.length, 1, `ran once although the job outlived its lease 4 times (${calls.join(',')})`);
    t.ok(leaseSeen && claimedLease && (leaseSeen as Date) > (claimedLease as Date), 'the lease expiry moved forward');
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    await db.close();
  }
});

test('a run whose lease was taken over is aborted and cannot record an outcome', async (t) => {
  const db = await openDatabase(...withDb(tempDataDir()));
  const runner = new JobRunner(db, { pollMs: 20, leaseMs: 150 });
  let reason = '';
  runner.handle('work', async (_job, ctx) => {
    try {
      await sleep(5000, ctx.signal);
    } catch (err) {
      reason = (err as Error).name;
      throw err;
    }
  });
  try {
    const id = await queued(db);
    await runner.start();
    await waitFor(async () => (await getJob(db, id))?.state === 'running', 60_000, 'job running');
    await markRunning(db, id, 'another-gateway/4242/ff66', 60_000, 7);
    await waitFor(() => reason, 60_000, 'the handler to be aborted');
    await sleep(100);
    const job = await getJob(db, id);
    t.equal(reason, 'LeaseLostError', 'the handler saw the lease loss on its signal');
    t.deepEqual(
      { state: job?.state, owner: job?.leaseOwner, attempts: job?.attempts },
      { state: 'running', owner: 'another-gateway/4242/ff66', attempts: 7 },
      'the new holder\'s lease is untouched',
    );
  } finally {
    await runner.stop();
    await db.close();
  }
});

test('stop() lets a running job finish within the bound and stops claiming', async (t) => {
  const db = await openDatabase(...withDb(tempDataDir()));
  const runner = new JobRunner(db, { pollMs: 20 });
  let finished = false;
  runner.handle('work', async () => {
    await sleep(400);
    finished = true;
  });
  try {
    const id = await queued(db);
    await runner.start();
    await waitFor(async () => (await getJob(db, id))?.state === 'running', 60_000, 'job running');
    const result = await runner.stop({ timeoutMs: 30_000 });
    t.ok(finished, 'stop resolved after the handler returned');
    t.deepEqual(result, { drained: true, released: [] }, 'drained');
    t.equal((await getJob(db, id))?.state, 'done', 'the job is done');
    const later = await queued(db);
    await sleep(200);
    t.equal((await getJob(db, later))?.state, 'queued', 'a stopped runner claims nothing');
  } finally {
    await runner.stop();
    await db.close();
  }
});

test('stop() aborts a job still running past the bound and leaves it reclaimable', async (t) => {
  const db = await openDatabase(...withDb(tempDataDir()));
  const first = new JobRunner(db, { pollMs: 20, abortGraceMs: 30_000 });
  let sawReason = '';
  first.handle('work', async (_job, ctx) => {
    try {
      await sleep(60_000, ctx.signal);
    } catch (err) {
      sawReason = (err as Error).name;
      throw err;
    }
  });
  const second = new JobRunner(db, { pollMs: 20 });
  second.handle('work', async () => {});
  try {
    const id = await queued(db);
    await first.start();
    await waitFor(async () => (await getJob(db, id))?.state === 'running', 60_000, 'job running');
    const began = Date.now();
    const result = await first.stop({ timeoutMs: 300 });
    const took = Date.now() - began;
    t.deepEqual(result, { drained: false, released: [id] }, 'not drained; the job was released');
    t.equal(sawReason, 'RunnerStoppedError', 'the handler saw the shutdown on its signal');
    // The bound is the stop's 300 ms, then the handler's own reaction to the abort: well under the
    // grace (30 s) and the handler's minute, however busy the machine.
    t.ok(took >= 300 && took < 15_000, `stop kept its bound (${took} ms)`);
    const job = await getJob(db, id);
    t.deepEqual(
      { state: job?.state, owner: job?.leaseOwner, attempts: job?.attempts, due: (job?.runAfter.getTime() ?? Infinity) <= Date.now() },
      { state: 'queued', owner: null, attempts: 1, due: true },
      'queued again at once, lease cleared, attempts kept',
    );
    await second.start();
    await waitFor(async () => (await getJob(db, id))?.state === 'done', 60_000, 'done by the next runner');
    t.equal((await getJob(db, id))?.attempts, 2, 'completed by the next runner');
  } finally {
    await Promise.all([first.stop(), second.stop()]);
    await db.close();
  }
});
