// LoginThrottle on its own, with a clock the test moves: reservations, their three endings, the
// window, and the client keys.
import test from 'tape';
import { Throttled } from '../../../src/errors.ts';
import { LoginThrottle, throttleClientKey } from '../../../src/services/auth/login-throttle.ts';

function throttle(perLogin: number, perClient: number) {
  const clock = { now: 1_000_000 };
  return { clock, th: new LoginThrottle({ perLogin, perClient, windowMs: 60_000 }, () => clock.now) };
}

const refused = (fn: () => unknown): number | null => {
  try {
    fn();
    return null;
  } catch (err) {
    if (err instanceof Throttled) return err.retryAfterS;
    throw err;
  }
};

test('a reservation counts at once; release takes it back, fail keeps it, succeed clears the login', (t) => {
  const { clock, th } = throttle(2, 100);
  const a = th.reserve('user:1', 'c');
  const b = th.reserve('user:1', 'c');
  t.equal(refused(() => th.reserve('user:1', 'c')), 60, 'two in flight: the third is refused, Retry-After the window');
  a.release();
  let c = a;
  t.doesNotThrow(() => (c = th.reserve('user:1', 'c')), 'a released attempt frees its place');
  b.fail();
  c.fail();
  c.release();
  t.ok(refused(() => th.reserve('user:1', 'c')), 'an attempt ends once: release after fail changes nothing');
  clock.now += 30_000;
  t.equal(refused(() => th.reserve('user:1', 'c')), 30, 'Retry-After shrinks as the window slides');
  clock.now += 30_001;
  let d = a;
  t.doesNotThrow(() => (d = th.reserve('user:1', 'c')), 'failures leave the window');
  th.reserve('user:1', 'c').fail();
  d.succeed();
  t.doesNotThrow(() => {
    th.reserve('user:1', 'c');
    th.reserve('user:1', 'c');
  }, 'a success forgets the login\'s failures, its own and those before it');
  t.end();
});

test('the client dimension: a success gives back only its own reservation', (t) => {
  const { th } = throttle(100, 3);
  th.reserve('name:x', 'c').fail();
  th.reserve('user:1', 'c').succeed();
  th.reserve('user:1', 'c').succeed();
  th.reserve('name:y', 'c').fail();
  const last = th.reserve('name:z', 'c');
  t.ok(refused(() => th.checkClient('c')), 'three failures: checkClient refuses');
  t.ok(refused(() => th.reserve('user:1', 'c')), 'and so does reserve, for any login');
  t.equal(refused(() => th.reserve('user:1', 'd')), null, 'another client is not affected');
  last.release();
  t.equal(refused(() => th.checkClient('c')), null, 'released: below the limit again');
  t.end();
});

test('client keys: IPv4 as is (mapped or not), IPv6 by its /64', (t) => {
  t.equal(throttleClientKey('10.144.110.7'), '10.144.110.7');
  t.equal(throttleClientKey('::ffff:10.144.110.7'), '10.144.110.7', 'IPv4-mapped IPv6 is the IPv4 client');
  t.equal(throttleClientKey('2001:db8:1:2:aaaa::1'), throttleClientKey('2001:db8:1:2:ffff:ffff:ffff:ffff'), 'one /64, one key');
  t.notEqual(throttleClientKey('2001:db8:1:2::1'), throttleClientKey('2001:db8:1:3::1'), 'another /64, another key');
  t.equal(throttleClientKey('not an address'), 'peer:not an address');
  t.end();
});
