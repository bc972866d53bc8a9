// The login throttle under concurrency: an attempt is counted before its password is hashed, per
// user whatever name the body gives, and per client as the VPN rule sees it (X-Forwarded-For only
// from a trusted proxy). Real HTTP over sockets; the proxy test uses network namespaces.
import test from 'tape';
import { databaseUrlFor, onPostgres } from '../helpers/dialect.ts';
import { http, type HttpResponse } from '../helpers/http.ts';
import { createHosts } from '../helpers/netns.ts';
import { startServer, userWithToken, type TestServer } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';

const login = (s: TestServer, body: object) => http(`${s.url}/api/v1/sessions`, { json: body });
const statuses = (answers: HttpResponse[]) =>
  answers.reduce<Record<number, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});

test('100 concurrent wrong passwords for one login: exactly max_failures_per_login reach bcrypt, the rest 429', async (t) => {
  const s = await startServer({ auth: { max_failures_per_login: 5, max_failures_per_client: 1000, failure_window_s: 600 } });
  try {
    const ana = await userWithToken(s, 'ana');
    const before = s.app.passwords.stats().started;
    const answers = await Promise.all(Array.from({ length: 100 }, () => login(s, { login: 'ana', password: 'wrong-password' })));
    t.deepEqual(statuses(answers), { 401: 5, 429: 95 }, '5 x 401, 95 x 429');
    t.equal(s.app.passwords.stats().started - before, 5, 'bcrypt ran 5 times, not 100');
    const refused = answers.filter((r) => r.status === 429);
    t.ok(refused.every((r) => r.json().error.code === 'too_many_requests'), 'every 429 is too_many_requests');
    t.ok(refused.every((r) => Number(r.headers['retry-after']) > 0 && Number(r.headers['retry-after']) <= 600), 'every 429 has Retry-After within the window');
    const right = await login(s, { login: 'ana', password: ana.password });
    t.equal(right.status, 429, 'the right password is refused too while the login is throttled');
    t.equal(s.app.passwords.stats().started - before, 5, 'and is not hashed');
  } finally {
    await s.close();
  }
});

test('100 concurrent wrong logins for distinct names from one client: exactly max_failures_per_client reach bcrypt', async (t) => {
  const s = await startServer({ auth: { max_failures_per_login: 1000, max_failures_per_client: 7, failure_window_s: 600 } });
  try {
    const before = s.app.passwords.stats().started;
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => login(s, { login: `nobody${i}`, password: 'wrong-password' })));
    t.deepEqual(statuses(answers), { 401: 7, 429: 93 }, '7 x 401, 93 x 429');
    // Unknown names spend one comparison each (plus the equaliser hash, made once).
    const hashed = s.app.passwords.stats().started - before;
    t.ok(hashed === 7 || hashed === 8, `bcrypt ran ${hashed} times (7 comparisons + at most one equaliser)`);
  } finally {
    await s.close();
  }
});

test('one user named by login, username and email is counted once; unknown names by their lowercase text', async (t) => {
  const s = await startServer({ auth: { max_failures_per_login: 4, max_failures_per_client: 1000, failure_window_s: 600 } });
  try {
    const ana = await userWithToken(s, 'ana');
    const names = [{ email: 'ana@example.com' }, { username: 'ANA' }, { login: 'Ana@Example.COM' }, { login: 'ana' }];
    for (const name of names) t.equal((await login(s, { ...name, password: 'wrong-password' })).status, 401, `${JSON.stringify(name)}: 401`);
    for (const name of [{ username: 'ana' }, { email: 'ANA@example.com' }]) {
      const res = await login(s, { ...name, password: ana.password });
      t.equal(res.status, 429, `${JSON.stringify(name)}: 429 after 4 failures under any name`);
    }
    for (const name of ['Ghost', 'GHOST', 'ghost', 'gHoSt']) t.equal((await login(s, { login: name, password: 'wrong-password' })).status, 401, `${name}: 401`);
    t.equal((await login(s, { username: 'ghost', password: 'wrong-password' })).status, 429, 'an unknown name in any case: one key');
  } finally {
    await s.close();
  }
});

test('a right password is not a failure: it gives back its client reservation and clears the login', async (t) => {
  const s = await startServer({ auth: { max_failures_per_login: 3, max_failures_per_client: 3, failure_window_s: 600 } });
  try {
    const ana = await userWithToken(s, 'ana');
    t.equal((await login(s, { login: 'ana', password: 'wrong-password' })).status, 401, 'ana: 1 failure');
    t.equal((await login(s, { login: 'nobody', password: 'wrong-password' })).status, 401, 'client: 2 failures');
    for (let i = 0; i < 6; i++) t.equal((await login(s, { login: 'ana', password: ana.password })).status, 200, `right password ${i + 1}: 200`);
    t.equal((await login(s, { login: 'ana', password: 'wrong-password' })).status, 401, 'client: 3 failures (the successes counted none)');
    t.equal((await login(s, { login: 'ana', password: ana.password })).status, 429, 'client at its limit: 429');
  } finally {
    await s.close();
  }
});

test('two servers on one database share one window: 60 wrong passwords split over both give 5 x 401 in all', async (t) => {
  const auth = { max_failures_per_login: 5, max_failures_per_client: 1000, failure_window_s: 600 };
  const dir = tmpDir();
  // On PostgreSQL the second server has a data_dir of its own (another host), on the same database.
  const one = await startServer({ data_dir: dir, auth });
  const two = await startServer({ data_dir: onPostgres ? tmpDir() : dir, database: { url: databaseUrlFor(dir) }, auth });
  try {
    const ana = await userWithToken(one, 'ana');
    const before = one.app.passwords.stats().started + two.app.passwords.stats().started;
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => login(i % 2 ? one : two, { login: 'ana', password: 'wrong-password' })));
    t.deepEqual(statuses(answers), { 401: 5, 429: 55 }, '5 x 401, 55 x 429 over both servers');
    t.equal(one.app.passwords.stats().started + two.app.passwords.stats().started - before, 5, 'bcrypt ran 5 times on the two together');
    t.equal((await login(one, { login: 'ana', password: ana.password })).status, 429, 'the right password is refused on the first');
    t.equal((await login(two, { login: 'ana', password: ana.password })).status, 429, 'and on the second');
  } finally {
    await two.close();
    await one.close();
  }
});

test('X-Forwarded-For: ignored from an untrusted peer, believed from a trusted proxy', async (t) => {
  const net = await createHosts([
    { name: 'proxy', addr: '10.144.110.2', gw: '10.144.110.1' },
    { name: 'direct', addr: '10.144.111.2', gw: '10.144.111.1' },
  ]);
  const s = await startServer(
    { server: { trusted_proxies: ['10.144.110.2'] }, auth: { max_failures_per_login: 1000, max_failures_per_client: 3, failure_window_s: 600 } },
    { host: '::' },
  );
  try {
    const port = s.server.info.port;
    const attempt = (from: 'proxy' | 'direct', n: number, xff: string) => ({
      url: `http://${net.host(from).serverAddr}:${port}/api/v1/sessions`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': xff },
      body: JSON.stringify({ login: `${from}${n}`, password: 'wrong-password' }),
    });
    const direct = await net.requestAll('direct', [0, 1, 2, 3, 4].map((n) => attempt('direct', n, `10.144.200.${n + 1}`)), { concurrency: 1 });
    t.deepEqual(direct.map((r) => r.status), [401, 401, 401, 429, 429], 'untrusted peer: a new X-Forwarded-For each time is still the same client');
    const proxied = await net.requestAll('proxy', [
      attempt('proxy', 0, '10.144.200.1'),
      attempt('proxy', 1, '10.144.200.1'),
      attempt('proxy', 2, '192.0.2.7, 10.144.200.1'),
      attempt('proxy', 3, '10.144.200.1'),
      attempt('proxy', 4, '10.144.200.2'),
      attempt('proxy', 5, '10.144.200.3'),
    ], { concurrency: 1 });
    t.deepEqual(
      proxied.map((r) => r.status),
      [401, 401, 401, 429, 401, 401],
      'trusted proxy: counted per forwarded client (the right-most entry), each with its own limit',
    );
    t.equal(proxied[3].headers['retry-after'] !== undefined, true, 'the 429 carries Retry-After');
  } finally {
    await s.close();
    await net.destroy();
  }
});
