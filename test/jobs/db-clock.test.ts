// The queue's times come from the database's clock: on PostgreSQL the server's now() (the claim
// compares with it), so an app whose clock is far off still claims due jobs on time, backs off and
// holds leases for the time asked. On SQLite the app's clock is the database's: the same steps hold.
import test from 'tape';
import { openDatabase, type Database } from '../../src/db/index.ts';
import { dbNow } from '../../src/db/clock.ts';
import { enqueue } from '../../src/jobs/enqueue.ts';
import { RunnerStore } from '../../src/jobs/store.ts';
import { tempDataDir } from '../helpers/jobs.ts';
import { onPostgres, withDb } from '../helpers/dialect.ts';

const HOUR = 3_600_000;
const RealDate = Date;

/** Runs fn with this process's clock (Date.now, new Date()) offsetMs away from the real one. */
async function withAppClock<T>(offsetMs: number, fn: () => Promise<T>): Promise<T> {
  class Skewed extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + offsetMs);
      else super(...(args as [number]));
    }
    static override now(): number {
      return RealDate.now() + offsetMs;
    }
  }
  globalThis.Date = Skewed as DateConstructor;
  try {
    return await fn();
  } finally {
    globalThis.Date = RealDate;
  }
}

async function job(db: Database, id: number) {
  return (await db.models.Job.findByPk(id))!;
}

for (const [name, offset] of [['an hour ahead', HOUR], ['an hour behind', -HOUR]] as const) {
  test(`app clock ${name} of the database's: due jobs are claimed at once, backoff and leases keep their length`, async (t) => {
    const db = await openDatabase(...withDb(tempDataDir()));
    const store = new RunnerStore(db);
    try {
      // On SQLite the app's clock is the database's: skew it there too, the results must not change.
      await withAppClock(offset, async () => {
        const queued = await db.writes.run((transaction) => enqueue('clock', { n: 1 }, { transaction }));
        t.ok(queued.runAfter instanceof RealDate && Number.isFinite(queued.runAfter.getTime()), 'enqueue returns the stored run_after as a date');
        t.equal(await store.hasClaimable(['clock']), true, 'a job enqueued now is due now');
        const claimed = await store.claim(['clock'], 'clock-test', 60_000);
        t.equal(claimed?.id, queued.id, 'and claimed at once');
        const lease = { id: queued.id, owner: 'clock-test', attempts: 1 };

        // Stamped between two reads of the database's clock: 60 s after one of them.
        const within = async (what: string, write: () => Promise<unknown>, read: () => Promise<Date>) => {
          const before = (await dbNow(db.sequelize)).getTime();
          await write();
          const after = (await dbNow(db.sequelize)).getTime();
          const at = (await read()).getTime();
          t.ok(at >= before + 60_000 && at <= after + 60_000, `${what}: 60 s after the database's now (${at - before} ms after the read before it)`);
        };
        await within('the renewed lease ends', async () => t.ok(await store.renew(lease, 60_000), 'the lease is renewed'), async () => (await job(db, queued.id)).lease_expires_at!);
        await within(
          'a transient failure is due again',
          async () => t.equal(await store.retryOrFail(lease, 5, { message: 'try later', code: 'test' }, 60_000), 'queued', 'a transient failure'),
          async () => (await job(db, queued.id)).run_after,
        );
        t.equal(await store.hasClaimable(['clock']), false, 'backed off: not due yet');
        t.equal(await store.claim(['clock'], 'clock-test', 60_000), null, 'and not claimed');
      });
      t.equal((await dbNow(db.sequelize)).getTime() - RealDate.now() < 60_000, true, `the database's clock is the real one (${onPostgres ? 'server' : 'app'})`);
    } finally {
      await db.close();
    }
  });
}
