// The `_service_pm_session` cookie's secret: nodes on one PostgreSQL database share one (made once in
// the database by whichever starts first), so a cookie sealed by one is opened by the other; on
// SQLite it is data_dir's file; server.cookie_secret wins over both. The check: the other server's
// own cookie definitions parse (unseal) the cookie the first one set.
import { existsSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { databaseUrlFor, onPostgres } from '../helpers/dialect.ts';
import { http } from '../helpers/http.ts';
import { startServer, userWithToken, type TestServer } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';

const COOKIE = '_service_pm_session';

/** `name=value` of the session cookie s sets (PUT /api/v1/users/:id sets it, as in the seed). */
async function sessionCookie(s: TestServer, user: { id: string; token: string }): Promise<string> {
  const res = await http(`${s.url}/api/v1/users/${user.id}`, { method: 'PUT', json: { user: { rig_ui_settings: {} } }, headers: { authorization: user.token } });
  const header = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith(`${COOKIE}=`));
  if (!header) throw new Error(`no ${COOKIE} cookie in the login answer (${res.status})`);
  return header.split(';')[0]!;
}

/** What s makes of the cookie: its content, or null when it cannot open it. */
async function opens(s: TestServer, cookie: string): Promise<unknown> {
  const { states, failed } = await s.server.states.parse(cookie);
  return failed.length ? null : ((states as unknown as Record<string, unknown>)[COOKIE] ?? null);
}

test('two servers on one database started at once: a cookie sealed by one is opened by the other; another database cannot', async (t) => {
  const dir = tmpDir();
  const other = tmpDir();
  // On PostgreSQL the second node has a data_dir of its own on the same database; SQLite's database is data_dir's.
  const [one, two] = await Promise.all([
    startServer({ data_dir: dir }),
    startServer({ data_dir: onPostgres ? other : dir, database: { url: databaseUrlFor(dir) } }),
  ]);
  const stranger = await startServer();
  try {
    const ana = await userWithToken(one, 'ana');
    const cookie = await sessionCookie(one, ana);
    const content = await opens(two, cookie);
    t.equal(String((content as { uid?: unknown } | null)?.uid), ana.id, 'the second server opens the cookie the first sealed');
    const back = await sessionCookie(two, ana);
    t.equal(String((await opens(one, back) as { uid?: unknown } | null)?.uid), ana.id, 'and the other way round');
    t.equal(await opens(stranger, cookie), null, 'a server on another database (another secret) cannot open it');
    if (onPostgres) {
      t.notOk(existsSync(path.join(dir, 'cookie-secret')) || existsSync(path.join(other, 'cookie-secret')), 'on PostgreSQL no data_dir holds a cookie secret');
      const rows = await one.app.db.reader.all<{ n: number }>("SELECT count(*) AS n FROM secrets WHERE name = 'cookie-secret'");
      t.equal(Number(rows[0]!.n), 1, 'one secret row in the database');
    } else {
      t.ok(existsSync(path.join(dir, 'cookie-secret')), "on SQLite the secret is data_dir's file");
      const rows = await one.app.db.reader.all<{ n: number }>("SELECT count(*) AS n FROM secrets WHERE name = 'cookie-secret'");
      t.equal(Number(rows[0]!.n), 0, 'and no secrets row (the file is the secret)');
    }
  } finally {
    await Promise.all([one.close(), two.close(), stranger.close()]);
  }
});

test('server.cookie_secret set: servers on different databases open each other\'s cookies, and nothing is generated', async (t) => {
  const cookie_secret = 'a-configured-cookie-secret-of-at-least-32-characters';
  const [one, two] = await Promise.all([startServer({ server: { cookie_secret } }), startServer({ server: { cookie_secret } })]);
  try {
    const bo = await userWithToken(one, 'bo');
    const cookie = await sessionCookie(one, bo);
    t.ok(await opens(two, cookie), 'the configured secret opens it anywhere');
    t.notOk(existsSync(path.join(one.config.data_dir, 'cookie-secret')), 'no file in data_dir');
    const rows = await one.app.db.reader.all<{ n: number }>('SELECT count(*) AS n FROM secrets');
    t.equal(Number(rows[0]!.n), 0, 'no secrets row');
  } finally {
    await Promise.all([one.close(), two.close()]);
  }
});
