// test: alone (password hash pool under load)
// HashPool on its own, with work that only waits: the cap, the queue bound and the wait bound.
// No fixed small durations: work waits on gates the test opens once what it asserts has happened
// (the operations are queued, a wait has outlasted maxWaitMs), so a busy machine only slows it.
import test from 'tape';
import { Throttled } from '../../../src/errors.ts';
import { HashPool } from '../../../src/services/auth/hash-pool.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'done',
    (err) => (err instanceof Throttled ? `${err.code} ${err.retryAfterS >= 1 ? 'with' : 'without'} Retry-After` : String(err)),
  );

/** A promise and the function that resolves it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

test('at most `concurrency` operations run at once; the rest wait their turn', async (t) => {
  const pool = new HashPool({ concurrency: 2, maxQueued: 100, maxWaitMs: 60_000 });
  let running = 0;
  let most = 0;
  const go = gate();
  const work = async () => {
    most = Math.max(most, ++running);
    await go.opened;
    await new Promise((resolve) => setImmediate(resolve));
    running--;
  };
  const pending = Array.from({ length: 12 }, () => outcome(pool.run(work)));
  t.deepEqual([pool.stats().running, pool.stats().queued], [2, 10], '2 running, 10 waiting while the work is held');
  go.open();
  const all = await Promise.all(pending);
  t.deepEqual(all, Array(12).fill('done'), 'all 12 done');
  t.equal(most, 2, 'never more than 2 at once');
  t.deepEqual(pool.stats(), { started: 12, refused: 0, running: 0, queued: 0 });
  t.end();
});

test('past maxQueued waiting, a new operation is refused at once with Retry-After', async (t) => {
  const pool = new HashPool({ concurrency: 1, maxQueued: 2, maxWaitMs: 60_000 });
  const go = gate();
  const pending = Array.from({ length: 5 }, () => outcome(pool.run(() => go.opened)));
  go.open();
  const all = await Promise.all(pending);
  t.deepEqual(all, ['done', 'done', 'done', 'login_busy with Retry-After', 'login_busy with Retry-After'], '1 running + 2 waiting, 2 refused');
  t.deepEqual([pool.stats().started, pool.stats().refused], [3, 2]);
  t.end();
});

test('an operation that would wait, or did wait, longer than maxWaitMs is refused, not run', async (t) => {
  // maxWaitMs is far above how long the first operation takes to start on a loaded machine (a few
  // microtasks); the first holds its slot until the others have waited longer than that, as measured.
  const maxWaitMs = 1_000;
  const pool = new HashPool({ concurrency: 1, maxQueued: 100, maxWaitMs });
  const go = gate();
  const first = outcome(pool.run(() => go.opened));
  const queuedAt = performance.now();
  // Estimated wait at the first guess of 250 ms per operation: 250 ms per one running or waiting.
  // The 2nd to 5th would wait 250 to 1,000 ms: queued; the 6th, 1,250 ms: refused at once.
  const waiting = Array.from({ length: 4 }, () => outcome(pool.run(async () => {})));
  t.deepEqual([pool.stats().running, pool.stats().queued, pool.stats().refused], [1, 4, 0], 'the first runs, four wait');
  const sixth = outcome(pool.run(async () => {}));
  t.deepEqual([pool.stats().queued, pool.stats().refused], [4, 1], 'the sixth is refused at once, by the estimate, before any wait');
  while (performance.now() - queuedAt <= maxWaitMs) await sleep(maxWaitMs / 4);
  go.open();
  t.deepEqual(
    await Promise.all([first, ...waiting, sixth]),
    ['done', ...Array(5).fill('login_busy with Retry-After')],
    `the four that waited over ${maxWaitMs} ms are refused when their turn comes; the sixth was already`,
  );
  t.deepEqual([pool.stats().started, pool.stats().refused], [1, 5], 'only the first reached the work');
  t.end();
});
