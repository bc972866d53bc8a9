// The claim is fair between groups (jobs.fair_group, a rig's captures are one): a group with many
// queued jobs holds back another group's next job by at most one job per slot.
import test from 'tape';
import { openDatabase, type Database } from '../../src/db/index.ts';
import { enqueue } from '../../src/jobs/enqueue.ts';
import { RunnerStore } from '../../src/jobs/store.ts';
import { withDb } from '../helpers/dialect.ts';
import { sleep, tempDataDir } from '../helpers/jobs.ts';

const OWNER = 'node-1/host/1/test';
const LEASE_MS = 60_000;

async function queue(db: Database, jobs: [string, string | undefined][]): Promise<void> {
  for (const [name, group] of jobs) {
    await db.writes.run((transaction) => enqueue('capture', { name }, { transaction, group }));
  }
}

/** Claims one job (a new millisecond first: SQLite's clock is in ms), returns its name and lease. */
async function claim(store: RunnerStore) {
  await sleep(3);
  const job = await store.claim(['capture'], OWNER, LEASE_MS);
  if (!job) return null;
  return { name: (job.payload as { name: string }).name, lease: { id: job.id, owner: OWNER, attempts: job.attempts } };
}

/** Runs the queue dry with one slot: each job done before the next claim. Returns the order. */
async function drain(store: RunnerStore): Promise<string[]> {
  const order: string[] = [];
  for (let c = await claim(store); c; c = await claim(store)) {
    order.push(c.name);
    await store.complete(c.lease);
  }
  return order;
}

async function withStore(fn: (db: Database, store: RunnerStore) => Promise<void>): Promise<void> {
  const db = await openDatabase(...withDb(tempDataDir()));
  try {
    await fn(db, new RunnerStore(db));
  } finally {
    await db.close();
  }
}

test('one slot: a rig with six queued captures delays another rig\'s capture by one job at most; then round robin', async (t) => {
  await withStore(async (db, store) => {
    await queue(db, [1, 2, 3, 4, 5, 6].map((i) => [`a${i}`, 'rig:a']));
    const first = await claim(store);
    t.equal(first?.name, 'a1', 'a1 runs');
    await queue(db, [['b1', 'rig:b'], ['c1', 'rig:c'], ['b2', 'rig:b']]);
    await store.complete(first!.lease);
    t.deepEqual(await drain(store), ['b1', 'c1', 'a2', 'b2', 'a3', 'a4', 'a5', 'a6'], "b1 and c1 next, not after a's five others; then each group in turn");
  });
});

test('two slots: both running a rig\'s captures, another rig\'s capture is claimed as soon as one slot frees', async (t) => {
  await withStore(async (db, store) => {
    await queue(db, [1, 2, 3, 4, 5, 6].map((i) => [`a${i}`, 'rig:a']));
    const slot1 = await claim(store);
    const slot2 = await claim(store);
    t.deepEqual([slot1?.name, slot2?.name], ['a1', 'a2'], 'both slots run rig a');
    await queue(db, [['b1', 'rig:b']]);
    await store.complete(slot1!.lease);
    t.equal((await claim(store))?.name, 'b1', 'the freed slot takes b1, ahead of a3..a6');
  });
});

test('round robin between three groups queued at once; a job of no group ranks as a group never served', async (t) => {
  await withStore(async (db, store) => {
    await queue(db, [
      ['a1', 'rig:a'], ['a2', 'rig:a'], ['a3', 'rig:a'],
      ['b1', 'rig:b'], ['b2', 'rig:b'], ['b3', 'rig:b'],
      ['c1', 'rig:c'], ['c2', 'rig:c'], ['c3', 'rig:c'],
      ['n1', undefined],
    ]);
    t.deepEqual(await drain(store), ['a1', 'b1', 'c1', 'n1', 'a2', 'b2', 'c2', 'a3', 'b3', 'c3'], 'a, b, c in turn; n1 once every group was served');
  });
});
