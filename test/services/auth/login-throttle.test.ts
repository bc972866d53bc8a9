// LoginThrottle on its own, over a real database (SQLite file or PostgreSQL), with a clock the test
// moves: reservations, their three endings, the window, concurrent reservations, two processes'
// worth of throttles on one database, pruning, and the client keys.
import test from 'tape';
import { openDatabase, type Database } from '../../../src/db/index.ts';
import { Throttled } from '../../../src/errors.ts';
import { LoginThrottle, loginDelayMs, throttleClientKey } from '../../../src/services/auth/login-throttle.ts';
import { withDb } from '../../helpers/dialect.ts';
import { tmpDir } from '../../helpers/tmp.ts';

const opened: Database[] = [];
async function database(dataDir = tmpDir()): Promise<Database> {
  const db = await openDatabase(...withDb(dataDir));
  opened.push(db);
  return db;
}

async function throttle(perLogin: number, perClient: number, db?: Database) {
  const clock = { now: 1_000_000 };
  return { clock, th: new LoginThrottle(db ?? (await database()), { perLogin, perClient, windowMs: 60_000 }, () => clock.now) };
}

/** The Retry-After (s) fn is refused with, or null when it passes. */
const refused = async (fn: () => unknown): Promise<number | null> => {
  try {
    await fn();
    return null;
  } catch (err) {
    if (err instanceof Throttled) return err.retryAfterS;
    throw err;
  }
};

const rows = async (db: Database): Promise<number> => Number((await db.reader.all<{ n: number }>('SELECT count(*) AS n FROM login_attempts'))[0]!.n);

test('a reservation counts at once; release takes it back, fail keeps it, succeed clears the login', async (t) => {
  const { clock, th } = await throttle(2, 100);
  const a = await th.reserve('user:1', 'c');
  const b = await th.reserve('user:1', 'c');
  t.equal(await refused(() => th.reserve('user:1', 'c')), 60, 'two in flight: the third is refused, Retry-After the window');
  await a.release();
  let c = a;
  t.equal(await refused(async () => (c = await th.reserve('user:1', 'c'))), null, 'a released attempt frees its place');
  await b.fail();
  await c.fail();
  await c.release();
  t.ok(await refused(() => th.reserve('user:1', 'c')), 'an attempt ends once: release after fail changes nothing');
  clock.now += 30_000;
  t.equal(await refused(() => th.reserve('user:1', 'c')), 30, 'Retry-After shrinks as the window slides');
  clock.now += 30_001;
  let d = a;
  t.equal(await refused(async () => (d = await th.reserve('user:1', 'c'))), null, 'failures leave the window');
  await (await th.reserve('user:1', 'c')).fail();
  await d.succeed();
  t.equal(
    await refused(async () => {
      await th.reserve('user:1', 'c');
      await th.reserve('user:1', 'c');
    }),
    null,
    "a success forgets the login's failures, its own and those before it",
  );
});

test('the client dimension: a success gives back only its own reservation', async (t) => {
  const { th } = await throttle(100, 3);
  await (await th.reserve('name:x', 'c')).fail();
  await (await th.reserve('user:1', 'c')).succeed();
  await (await th.reserve('user:1', 'c')).succeed();
  await (await th.reserve('name:y', 'c')).fail();
  const last = await th.reserve('name:z', 'c');
  t.equal(await refused(() => th.checkClient('c')), null, 'the pre-check has seen no refusal yet: the database decides');
  t.ok(await refused(() => th.reserve('user:1', 'c')), 'two failures and one in flight: reserve refuses, for any login');
  t.equal(await refused(() => th.checkClient('c')), 60, 'from then on the cheap pre-check refuses the client, Retry-After the window');
  t.equal(await refused(() => th.reserve('user:1', 'd')), null, 'another client is not affected');
  await last.release();
  t.equal(await refused(() => th.checkClient('c')), null, 'released: the pre-check lets the client through again');
  t.equal(await refused(() => th.reserve('user:3', 'c')), null, 'below the limit again');
});

test('50 reservations at once for one login: exactly the limit pass, the check and the count are one step', async (t) => {
  const { th } = await throttle(5, 1000);
  const outcomes = await Promise.all(Array.from({ length: 50 }, () => refused(() => th.reserve('user:7', 'c'))));
  t.equal(outcomes.filter((o) => o === null).length, 5, '5 reserved');
  t.equal(outcomes.filter((o) => o === 60).length, 45, '45 refused with Retry-After 60');
});

test('two throttles on one database (two rigd processes) share one window, at once and one after another', async (t) => {
  const dataDir = tmpDir();
  const [one, two] = [await database(dataDir), await database(dataDir)];
  const a = await throttle(6, 1000, one);
  const b = await throttle(6, 1000, two);
  const outcomes = await Promise.all(Array.from({ length: 40 }, (_, i) => refused(() => (i % 2 ? a : b).th.reserve('user:1', 'c'))));
  t.equal(outcomes.filter((o) => o === null).length, 6, '40 at once split over both: 6 reserved in all');
  t.ok(await refused(() => b.th.reserve('user:1', 'c')), 'the other one refuses the login to that client too');
  const stranger = await b.th.reserve('user:1', 'other-client');
  t.ok(stranger.delayMs > 0, `a client that has not failed is not refused: it waits ${stranger.delayMs} ms (the login is under attack)`);
  await stranger.release();
  const ok = await a.th.reserve('user:2', 'd');
  await ok.succeed();
  for (let i = 0; i < 3; i++) await (await a.th.reserve('name:x', 'e')).fail();
  const c = await throttle(100, 3, two);
  t.ok(await refused(() => c.th.reserve('name:y', 'e')), "a client's failures on one are counted by the other");
  t.ok(await refused(() => c.th.checkClient('e')), 'whose pre-check then refuses it too');
});

test('a login under attack from many clients: each client refused after its own failures, the others only delayed, more as the attack grows', async (t) => {
  const { clock, th } = await throttle(3, 100);
  const delays: number[] = [];
  for (let c = 0; c < 4; c++) {
    for (let i = 0; i < 3; i++) {
      const attempt = await th.reserve('user:1', `10.144.28.${c + 2}`);
      delays.push(attempt.delayMs);
      await attempt.fail();
    }
    t.ok(await refused(() => th.reserve('user:1', `10.144.28.${c + 2}`)), `attacker ${c + 1}: refused after its own 3 failures`);
  }
  t.deepEqual(delays.slice(0, 3), [0, 0, 0], 'below the limit over all clients: no delay');
  t.ok(delays.slice(3).every((d, i) => d > 0 && (i === 0 || d >= delays[3 + i - 1]!)), `past it every attempt waits, longer each time: ${delays.slice(3).join(', ')} ms`);
  t.equal(delays[delays.length - 1], 5000, 'up to the cap (5 s by default)');
  const owner = await th.reserve('user:1', '10.144.29.2');
  t.equal(owner.delayMs, 5000, 'a client that has not failed is let through, after the delay');
  await owner.succeed();
  t.ok(await refused(() => th.reserve('user:1', '10.144.28.2')), "the owner's success does not give the attackers their attempts back");
  t.equal(await th.forget('user:1'), 12, "an operator's unlock clears the login's 12 failures");
  const again = await th.reserve('user:1', '10.144.28.2');
  t.equal(again.delayMs, 0, 'after the unlock: no delay, and the first attacker may try again');
  await again.release();
  clock.now += 60_001;
  t.equal(loginDelayMs(10, 10, 800), 100, 'loginDelayMs: 100 ms at the limit');
  t.equal(loginDelayMs(13, 10, 800), 800, 'doubling per further attempt, capped');
  t.equal(loginDelayMs(9, 10), 0, 'nothing below the limit');
});

test('attempts that left the window are pruned: the table stays bounded', async (t) => {
  const db = await database();
  const { clock, th } = await throttle(1000, 1000, db);
  for (let i = 0; i < 20; i++) await (await th.reserve(`name:n${i}`, `10.0.0.${i}`)).fail();
  t.equal(await rows(db), 20, '20 failures, 20 rows');
  clock.now += 60_001;
  await (await th.reserve('name:late', 'c')).fail();
  // The prune runs beside the reservation; it has run once the next write through the path ends.
  await (await th.reserve('name:later', 'c')).fail();
  // Up to 60 s (a second was too short on a busy machine); it ends as soon as the prune has run.
  let left = await rows(db);
  for (const deadline = Date.now() + 60_000; left !== 2 && Date.now() < deadline; ) {
    await new Promise((r) => setTimeout(r, 20));
    left = await rows(db);
  }
  t.equal(left, 2, 'the 20 old rows are gone, the 2 in the window stay');
});

test('client keys: IPv4 as is (mapped or not), IPv6 by its /64', (t) => {
  t.equal(throttleClientKey('10.144.110.7'), '10.144.110.7');
  t.equal(throttleClientKey('::ffff:10.144.110.7'), '10.144.110.7', 'IPv4-mapped IPv6 is the IPv4 client');
  t.equal(throttleClientKey('2001:db8:1:2:aaaa::1'), throttleClientKey('2001:db8:1:2:ffff:ffff:ffff:ffff'), 'one /64, one key');
  t.notEqual(throttleClientKey('2001:db8:1:2::1'), throttleClientKey('2001:db8:1:3::1'), 'another /64, another key');
  t.equal(throttleClientKey('not an address'), 'peer:not an address');
  t.end();
});

// Teardown, no assertion: the databases the tests opened are closed.
test('teardown', async () => {
  for (const db of opened) await db.close();
});
