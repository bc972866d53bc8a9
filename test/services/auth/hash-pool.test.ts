// HashPool on its own, with work that only waits: the cap, the queue bound and the wait bound.
import test from 'tape';
import { Throttled } from '../../../src/errors.ts';
import { HashPool } from '../../../src/services/auth/hash-pool.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'done',
    (err) => (err instanceof Throttled ? `${err.code} ${err.retryAfterS >= 1 ? 'with' : 'without'} Retry-After` : String(err)),
  );

test('at most `concurrency` operations run at once; the rest wait their turn', async (t) => {
  const pool = new HashPool({ concurrency: 2, maxQueued: 100, maxWaitMs: 60_000 });
  let running = 0;
  let most = 0;
  const work = async () => {
    most = Math.max(most, ++running);
    await sleep(5);
    running--;
  };
  const all = await Promise.all(Array.from({ length: 12 }, () => outcome(pool.run(work))));
  t.deepEqual(all, Array(12).fill('done'), 'all 12 done');
  t.equal(most, 2, 'never more than 2 at once');
  t.deepEqual(pool.stats(), { started: 12, refused: 0, running: 0, queued: 0 });
  t.end();
});

test('past maxQueued waiting, a new operation is refused at once with Retry-After', async (t) => {
  const pool = new HashPool({ concurrency: 1, maxQueued: 2, maxWaitMs: 60_000 });
  const all = await Promise.all(Array.from({ length: 5 }, () => outcome(pool.run(() => sleep(5)))));
  t.deepEqual(all, ['done', 'done', 'done', 'login_busy with Retry-After', 'login_busy with Retry-After'], '1 running + 2 waiting, 2 refused');
  t.deepEqual([pool.stats().started, pool.stats().refused], [3, 2]);
  t.end();
});

test('an operation that would wait, or did wait, longer than maxWaitMs is refused, not run', async (t) => {
  const pool = new HashPool({ concurrency: 1, maxQueued: 100, maxWaitMs: 40 });
  const first = outcome(pool.run(() => sleep(150)));
  const second = outcome(pool.run(() => sleep(1)));
  // Estimated: 1 running + 1 waiting at the first guess of 250 ms each, far beyond 40 ms.
  const third = outcome(pool.run(() => sleep(1)));
  t.deepEqual(await Promise.all([first, second, third]), ['done', 'login_busy with Retry-After', 'login_busy with Retry-After'], 'the second waited 150 ms: refused when its turn came; the third at once');
  t.deepEqual([pool.stats().started, pool.stats().refused], [1, 2], 'only the first reached the work');
  t.end();
});
