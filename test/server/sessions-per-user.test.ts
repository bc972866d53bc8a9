// Live sessions per user are bounded (auth.max_sessions_per_user): a login past the bound ends the
// user's least recently used session in the transaction that stores the new one, and never fails
// for it. Logins are real HTTP from a rig UI client on a namespace address (successful logins are
// not failures: the login throttle lets every one of them through).
import test from 'tape';
import { auditRows } from '../../src/db/audit.ts';
import { rigd } from '../helpers/cli.ts';
import { databaseUrlFor, onPostgres } from '../helpers/dialect.ts';
import { createHosts, type Hosts } from '../helpers/netns.ts';
import { startServer, userWithToken, type TestServer } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';

const NET = { addr: '10.144.213.2', gw: '10.144.213.1', extraAddrs: ['10.144.213.3', '10.144.213.4', '10.144.213.5', '10.144.213.6'] };

let net: Hosts;
const hosts = async () => (net ??= await createHosts([{ name: 'ui', ...NET }]));
test.onFinish(() => void net?.destroy());

const base = (s: TestServer) => `http://${net.host('ui').serverAddr}:${s.server.info.port}`;

function loginReq(s: TestServer, name: string, password: string, localAddress?: string) {
  return {
    localAddress,
    url: `${base(s)}/api/v1/sessions`,
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify({ login: name, password }),
  };
}

/** PUT /api/v1/users/:id with the token in the Authorization header (as the seed) or in the token cookie. */
function settingsReq(s: TestServer, id: string, token: string, via: 'header' | 'cookie' = 'header') {
  return {
    url: `${base(s)}/api/v1/users/${id}`,
    method: 'PUT',
    headers: { accept: 'application/json', 'content-type': 'application/json', ...(via === 'header' ? { authorization: token } : { cookie: `token=${token}` }) },
    body: JSON.stringify({ user: { rig_ui_settings: { button: { x: 1.5, y: 2.5 } } } }),
  };
}

const tokenOf = (body: string) => (JSON.parse(body) as { token: string }).token;
const codeOf = (body: string) => (JSON.parse(body) as { error?: { code?: string } }).error?.code;

async function liveSessions(s: TestServer, username: string): Promise<number> {
  const user = await s.app.users.getByName(username);
  return s.app.db.models.Session.count({ where: { user_id: Number(user.id) } });
}

test('auth.max_sessions_per_user 20, 25 logins of one user one after another: all 200, the 20 newest sessions live, the 6 oldest answer 401 invalid_token', async (t) => {
  await hosts();
  const s = await startServer({ auth: { max_sessions_per_user: 20 } }, { host: '::' });
  try {
    const ana = await userWithToken(s, 'ana');
    const bob = await userWithToken(s, 'bob');
    const logins = await net.requestAll('ui', Array.from({ length: 25 }, () => loginReq(s, 'ana', ana.password)), { concurrency: 1 });
    t.deepEqual([...new Set(logins.map((r) => r.status))], [200], 'every login: 200 (none refused by the throttle or the bound)');
    // ana's first session (userWithToken) and her 25 logins: 26 in all, the oldest 6 ended.
    const tokens = [ana.token, ...logins.map((r) => tokenOf(r.body))];
    t.equal(await liveSessions(s, 'ana'), 20, "ana has 20 live sessions, not 26");
    const ended = tokens.slice(0, 6);
    const live = tokens.slice(6);
    const endedAnswers = await net.requestAll('ui', ended.map((tk) => settingsReq(s, ana.id, tk)), { concurrency: 1 });
    t.deepEqual(endedAnswers.map((r) => `${r.status} ${codeOf(r.body)}`), ended.map(() => '401 invalid_token'), 'the 6 oldest tokens: 401 invalid_token');
    const byCookie = await net.request('ui', settingsReq(s, ana.id, ended[0]!, 'cookie'));
    t.equal(`${byCookie.status} ${codeOf(byCookie.body)}`, '401 invalid_token', 'the oldest token in the token cookie: 401 invalid_token');
    const liveAnswers = await net.requestAll('ui', live.map((tk) => settingsReq(s, ana.id, tk)), { concurrency: 4 });
    t.deepEqual([...new Set(liveAnswers.map((r) => r.status))], [200], 'the 20 newest tokens: 200');
    const newestByCookie = await net.request('ui', settingsReq(s, ana.id, live.at(-1)!, 'cookie'));
    t.equal(newestByCookie.status, 200, 'the newest token in the token cookie: 200');
    t.equal(await liveSessions(s, 'bob'), 1, "bob's session is untouched");
    t.equal((await net.request('ui', settingsReq(s, bob.id, bob.token))).status, 200, "bob's token still works");
    const limited = (await auditRows(s.app.db.reader, { limit: 1000 })).filter((e) => e.kind === 'session.revoked' && (JSON.parse(e.details) as { how?: string }).how === 'limit');
    const endedOnRecord = limited.reduce((n, e) => n + (JSON.parse(e.details) as { sessions_ended: number }).sessions_ended, 0);
    t.equal(endedOnRecord, 6, 'each ended session is on record in the audit log (session.revoked, how: limit)');
    t.ok(limited.every((e) => e.subject === 'ana'), 'all of them ana\'s');
  } finally {
    await s.close();
  }
});

test('25 logins of one user at once, through two servers on one database: all 200, and afterwards exactly 20 live sessions, all working', async (t) => {
  await hosts();
  const dir = tmpDir();
  // Two servers (two processes' worth of writers) on one database: on PostgreSQL the second has a
  // data_dir of its own (another host); each takes its logins' bcrypt four at a time.
  const auth = { hash_concurrency: 4, max_sessions_per_user: 20 };
  const one = await startServer({ data_dir: dir, auth }, { host: '::' });
  const two = await startServer({ data_dir: onPostgres ? tmpDir() : dir, database: { url: databaseUrlFor(dir) }, auth }, { host: '::' });
  try {
    const ana = await userWithToken(one, 'ana');
    const bob = await userWithToken(one, 'bob');
    // From five addresses, five each: the throttle counts an attempt from its start, so one client has
    // at most auth.max_failures_per_login (10) attempts of one login in flight; the rest would be 429.
    const addrs = net.host('ui').addrs;
    const logins = await net.requestAll('ui', Array.from({ length: 25 }, (_, i) => loginReq(i % 2 ? one : two, 'ana', ana.password, addrs[i % addrs.length])));
    t.deepEqual([...new Set(logins.map((r) => r.status))], [200], 'every concurrent login: 200');
    t.equal(await liveSessions(one, 'ana'), 20, 'the bound holds: 20 live sessions');
    const tokens = [ana.token, ...logins.map((r) => tokenOf(r.body))];
    const answers = await net.requestAll('ui', tokens.map((tk, i) => settingsReq(i % 2 ? one : two, ana.id, tk)), { concurrency: 4 });
    t.equal(answers.filter((r) => r.status === 200).length, 20, '20 of the 26 tokens work (on either server)');
    t.equal(answers.filter((r) => r.status === 401 && codeOf(r.body) === 'invalid_token').length, 6, 'the other 6: 401 invalid_token');
    t.equal(await liveSessions(one, 'bob'), 1, "bob's session is untouched");
    t.equal((await net.request('ui', settingsReq(two, bob.id, bob.token))).status, 200, "bob's token still works");
  } finally {
    await two.close();
    await one.close();
  }
});

test('the least recently used session ends, not the oldest: a bound of 3', async (t) => {
  await hosts();
  const s = await startServer({ auth: { max_sessions_per_user: 3 } }, { host: '::' });
  try {
    const ana = await userWithToken(s, 'ana');
    const [second, third] = (await net.requestAll('ui', [loginReq(s, 'ana', ana.password), loginReq(s, 'ana', ana.password)], { concurrency: 1 })).map((r) => tokenOf(r.body));
    // ana's first session was used last (as a minute later: touches are written at most once a minute).
    const user = await s.app.users.getByName('ana');
    const { Session } = s.app.db.models;
    const rows = await Session.findAll({ where: { user_id: Number(user.id) }, order: [['id', 'ASC']] });
    await rows[0]!.update({ last_used_at: new Date(Date.now() + 60_000) });
    const fourth = await net.request('ui', loginReq(s, 'ana', ana.password));
    t.equal(fourth.status, 200, 'the fourth login: 200');
    const statuses = await net.requestAll('ui', [ana.token, second!, third!, tokenOf(fourth.body)].map((tk) => settingsReq(s, ana.id, tk)), { concurrency: 1 });
    t.deepEqual(statuses.map((r) => r.status), [200, 401, 200, 200], 'the second (least recently used) ended; the first, used last, lives');
  } finally {
    await s.close();
  }
});

test('rigd user list still lists each user once, however many sessions', async (t) => {
  await hosts();
  const s = await startServer({ auth: { max_sessions_per_user: 2 } }, { host: '::' });
  try {
    const ana = await userWithToken(s, 'ana');
    await net.requestAll('ui', Array.from({ length: 4 }, () => loginReq(s, 'ana', ana.password)));
    t.equal(await liveSessions(s, 'ana'), 2, 'a bound of 2 holds');
    const res = await rigd(['user', 'list', '--json'], { env: { RIGD_DATA_DIR: s.config.data_dir } });
    t.equal(res.code, 0, `rigd user list exits 0 ${res.stderr}`);
    t.deepEqual((JSON.parse(res.stdout) as { username: string }[]).map((u) => u.username), ['ana'], 'ana, once');
  } finally {
    await s.close();
  }
});
