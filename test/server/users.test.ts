import test from 'tape';
import { MAX_JSON_DEPTH } from '../../src/server/ext/json-depth.ts';
import { tokenDigest } from '../../src/services/auth/tokens.ts';
import { cookieValue, http } from '../helpers/http.ts';
import { startServer, userWithToken, type TestServer } from '../helpers/server.ts';

const SETTINGS = { button: { position: { x: 0.25, y: 0.75 } } };

function put(s: TestServer, id: string, body: unknown, headers: Record<string, string> = {}) {
  return http(`${s.url}/api/v1/users/${id}`, { method: 'PUT', json: body, headers: { accept: 'application/json', ...headers } });
}

async function storedSettings(s: TestServer, id: string): Promise<string | null> {
  const user = await s.app.db.models.User.findByPk(Number(id));
  return user?.rig_ui_settings ?? null;
}

test('PUT /api/v1/users/:id: the seed body, headers and both cookies', async (t) => {
  const s = await startServer();
  try {
    const ana = await userWithToken(s, 'ana');
    const res = await put(s, ana.id, { user: { id: Number(ana.id), rig_ui_settings: SETTINGS } }, { authorization: ana.token });
    t.equal(res.status, 200);
    t.deepEqual(res.json(), {
      token: ana.token,
      data: { success: true, user: { email: 'ana@example.com', username: 'ana', rigUISettings: SETTINGS } },
    }, 'every field of the seed');
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    t.equal(res.headers['vary'], 'Accept, Origin', 'vary on the user endpoint');
    t.match(String(res.headers['etag']), /^W\/"[0-9a-f]{32}"$/);

    const token = res.cookies.find((c) => c.startsWith('token='));
    t.ok(token, 'token cookie set');
    t.equal(cookieValue(res.cookies, 'token'), ana.token, 'token cookie holds the token');
    t.match(String(token), /; Path=\/api(;|$)/, 'token: path=/api');
    t.match(String(token), /; HttpOnly(;|$)/, 'token: HttpOnly');
    t.match(String(token), /; SameSite=Lax(;|$)/, 'token: SameSite=Lax');
    const expires = /; Expires=([^;]+)/.exec(String(token));
    t.ok(expires && Date.parse(expires[1]) > Date.now() + 29 * 86400_000, 'token: expires with the session (30 days)');
    t.notOk(/; Secure/.test(String(token)), 'not Secure on plain HTTP');

    const session = res.cookies.find((c) => c.startsWith('_service_pm_session='));
    t.ok(session, '_service_pm_session cookie set');
    t.match(String(session), /; Path=\/(;|$)/, 'session: path=/');
    t.match(String(session), /; HttpOnly(;|$)/, 'session: HttpOnly');
    t.match(String(session), /; SameSite=Lax(;|$)/, 'session: SameSite=Lax');
    t.notOk(/Expires=/.test(String(session)), 'session: a browser-session cookie');
    t.ok(String(cookieValue(res.cookies, '_service_pm_session')).startsWith('Fe26.2**'), 'session: sealed');

    t.deepEqual(JSON.parse(String(await storedSettings(s, ana.id))), SETTINGS, 'stored');
    const login = await http(`${s.url}/api/v1/sessions`, { json: { login: 'ana', password: ana.password } });
    t.deepEqual(login.json().data.user.rig_ui_settings, SETTINGS, 'the next login returns the settings');
  } finally {
    await s.close();
  }
});

test('settings may be any JSON value, null included; user.id is optional and must match', async (t) => {
  const s = await startServer();
  try {
    const ana = await userWithToken(s, 'ana');
    const auth = { authorization: ana.token };
    for (const value of [null, 0, 'text', [1, 'two', { three: 3 }], { nested: { deep: [true, false, null] } }, false]) {
      const res = await put(s, ana.id, { user: { rig_ui_settings: value } }, auth);
      t.equal(res.status, 200, `${JSON.stringify(value)}: 200`);
      t.deepEqual(res.json().data.user.rigUISettings, value, `${JSON.stringify(value)}: echoed`);
    }
    t.equal((await put(s, ana.id, { user: { id: ana.id, rig_ui_settings: 1 } }, auth)).status, 200, 'user.id as a string');
    t.equal((await put(s, ana.id, { user: { id: Number(ana.id), rig_ui_settings: 2 } }, auth)).status, 200, 'user.id as a number');
    const mismatch = await put(s, ana.id, { user: { id: Number(ana.id) + 1, rig_ui_settings: 3 } }, auth);
    t.equal(mismatch.status, 400, 'another user.id: 400');
    t.equal(mismatch.json().error.code, 'id_mismatch');
    t.equal(await storedSettings(s, ana.id), '2', 'nothing changed');
  } finally {
    await s.close();
  }
});

test('tokens: raw, Bearer and cookie accepted; missing, wrong, expired, revoked -> 401', async (t) => {
  const s = await startServer();
  try {
    const ana = await userWithToken(s, 'ana');
    const body = { user: { rig_ui_settings: 'x' } };
    t.equal((await put(s, ana.id, body, { authorization: ana.token })).status, 200, 'raw token');
    t.equal((await put(s, ana.id, body, { authorization: `Bearer ${ana.token}` })).status, 200, 'Bearer token');
    t.equal((await put(s, ana.id, body, { cookie: `token=${ana.token}` })).status, 200, 'token cookie');

    const cases: [string, Record<string, string>, string][] = [
      ['no token', {}, 'missing_token'],
      ['wrong token', { authorization: 'A'.repeat(43) }, 'invalid_token'],
      ['wrong Bearer', { authorization: 'Bearer nope' }, 'invalid_token'],
      ['other scheme', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, 'invalid_token'],
      ['wrong cookie', { cookie: 'token=nope' }, 'invalid_token'],
    ];
    for (const [name, headers, code] of cases) {
      const res = await put(s, ana.id, { user: { rig_ui_settings: name } }, headers);
      t.equal(res.status, 401, `${name}: 401`);
      t.equal(res.json().error.code, code, `${name}: ${code}`);
    }

    const expiring = await userWithToken(s, 'eve');
    await s.app.db.writes.run((tx) =>
      s.app.db.models.Session.update({ expires_at: new Date(Date.now() - 1000) }, { where: { token_hash: tokenDigest(expiring.token) }, transaction: tx }),
    );
    const expired = await put(s, expiring.id, body, { authorization: expiring.token });
    t.equal(expired.status, 401, 'expired: 401');
    t.equal(expired.json().error.code, 'token_expired');

    await s.app.sessions.revoke(ana.token);
    const revoked = await put(s, ana.id, body, { authorization: ana.token });
    t.equal(revoked.status, 401, 'revoked: 401');
    t.equal(await storedSettings(s, ana.id), '"x"', 'nothing changed by refused requests');
  } finally {
    await s.close();
  }
});

test("another user's id: 403 and nothing changes; admins may", async (t) => {
  const s = await startServer();
  try {
    const ana = await userWithToken(s, 'ana');
    const bob = await userWithToken(s, 'bob');
    const root = await userWithToken(s, 'root', { admin: true });
    await put(s, bob.id, { user: { rig_ui_settings: 'bob' } }, { authorization: bob.token });
    const res = await put(s, bob.id, { user: { rig_ui_settings: 'ana was here' } }, { authorization: ana.token });
    t.equal(res.status, 403);
    t.equal(res.json().error.code, 'forbidden');
    t.equal(await storedSettings(s, bob.id), '"bob"', "bob's settings unchanged");
    t.equal((await put(s, '999', { user: { rig_ui_settings: 1 } }, { authorization: ana.token })).status, 403, 'unknown id, not admin: 403');
    const admin = await put(s, bob.id, { user: { rig_ui_settings: 'by admin' } }, { authorization: root.token });
    t.equal(admin.status, 200, 'admin: 200');
    t.equal(admin.json().data.user.username, 'bob', 'answers with the target user');
    t.equal(await storedSettings(s, bob.id), '"by admin"');
    const missing = await put(s, '999', { user: { rig_ui_settings: 1 } }, { authorization: root.token });
    t.equal(missing.status, 404, 'admin, unknown id: 404');
    t.equal(missing.json().error.code, 'user_not_found');
    t.equal((await put(s, 'abc', { user: { rig_ui_settings: 1 } }, { authorization: root.token })).status, 400, 'malformed id: 400');
  } finally {
    await s.close();
  }
});

test('bad bodies: 4xx JSON and nothing changes', async (t) => {
  const s = await startServer();
  try {
    const ana = await userWithToken(s, 'ana');
    const auth = { authorization: ana.token, 'content-type': 'application/json' };
    await put(s, ana.id, { user: { rig_ui_settings: 'kept' } }, { authorization: ana.token });
    const big = { user: { rig_ui_settings: { blob: 'x'.repeat(64 * 1024) } } };
    const cases: [string, string | Buffer, number, string][] = [
      ['malformed JSON', '{"user": {', 400, 'invalid_json'],
      ['no user', '{}', 400, 'invalid_params'],
      ['user is a string', '{"user": "x"}', 400, 'invalid_params'],
      ['no rig_ui_settings', '{"user": {"id": 1}}', 400, 'invalid_params'],
      ['user.id is an object', `{"user": {"id": {}, "rig_ui_settings": 1}}`, 400, 'invalid_params'],
      ['settings over 64 KiB', JSON.stringify(big), 413, 'settings_too_large'],
      ['5 MiB body', JSON.stringify({ user: { rig_ui_settings: 'x'.repeat(5 * 1024 * 1024) } }), 413, 'payload_too_large'],
    ];
    for (const [name, body, status, code] of cases) {
      const res = await http(`${s.url}/api/v1/users/${ana.id}`, { method: 'PUT', body, headers: auth });
      t.equal(res.status, status, `${name}: ${status}`);
      t.equal(res.json().error.code, code, `${name}: ${code}`);
      t.equal(res.headers['content-type'], 'application/json; charset=utf-8', `${name}: JSON`);
    }
    t.equal(await storedSettings(s, ana.id), '"kept"', 'nothing changed');
    const justUnder = { user: { rig_ui_settings: 'y'.repeat(64 * 1024 - 2) } };
    t.equal((await put(s, ana.id, justUnder, { authorization: ana.token })).status, 200, 'exactly 64 KiB of JSON is accepted');
  } finally {
    await s.close();
  }
});

test('100 concurrent PUTs on 100 users: all 200, all stored', async (t) => {
  const s = await startServer();
  try {
    const users = [];
    for (let i = 0; i < 100; i++) users.push(await userWithToken(s, `user${i}`));
    const results = await Promise.all(
      users.map((u, i) => put(s, u.id, { user: { id: u.id, rig_ui_settings: { n: i } } }, { authorization: u.token })),
    );
    t.deepEqual([...new Set(results.map((r) => r.status))], [200], 'all 200');
    const rows = await s.app.db.models.User.findAll();
    const stored = new Map(rows.map((r) => [String(r.id), r.rig_ui_settings]));
    t.ok(users.every((u, i) => stored.get(u.id) === JSON.stringify({ n: i })), 'every value stored on its own user');
  } finally {
    await s.close();
  }
});

test('JSON nested too deep: 400 json_too_deep (5000 levels, and one past the limit); the limit itself is stored', async (t) => {
  const s = await startServer();
  try {
    const ana = await userWithToken(s, 'ana');
    const auth = { authorization: ana.token, 'content-type': 'application/json', accept: 'application/json' };
    // The body {"user":{"rig_ui_settings":X}} is two levels around X.
    const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
    const body = (settingsDepth: number) => `{"user":{"rig_ui_settings":${nested(settingsDepth)}}}`;
    await put(s, ana.id, { user: { rig_ui_settings: 'kept' } }, { authorization: ana.token });
    for (const [what, depth] of [['5000 levels', 5000], [`${MAX_JSON_DEPTH + 1} levels (one past the limit)`, MAX_JSON_DEPTH + 1]] as const) {
      const res = await http(`${s.url}/api/v1/users/${ana.id}`, { method: 'PUT', body: body(depth - 2), headers: auth });
      t.equal(res.status, 400, `${what}: 400, not 500`);
      t.equal(res.json().error.code, 'json_too_deep', `${what}: json_too_deep`);
      t.match(res.json().error.message, new RegExp(`deeper than ${MAX_JSON_DEPTH} levels`), `${what}: the message names the limit`);
    }
    t.equal(await storedSettings(s, ana.id), '"kept"', 'nothing changed');
    const atLimit = await http(`${s.url}/api/v1/users/${ana.id}`, { method: 'PUT', body: body(MAX_JSON_DEPTH - 2), headers: auth });
    t.equal(atLimit.status, 200, `exactly ${MAX_JSON_DEPTH} levels: 200`);
    t.equal(await storedSettings(s, ana.id), nested(MAX_JSON_DEPTH - 2), 'and stored as sent');
    const objects = `{"user":{"rig_ui_settings":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}}`;
    const deepObjects = await http(`${s.url}/api/v1/users/${ana.id}`, { method: 'PUT', body: objects, headers: auth });
    t.deepEqual([deepObjects.status, deepObjects.json().error.code], [400, 'json_too_deep'], 'objects 5000 deep: 400 json_too_deep');
    for (const path of ['/api/v1/sessions', '/api/v1/webhooks/capture_uploaded']) {
      const res = await http(`${s.url}${path}`, { body: `{"login":${nested(5000)}}`, headers: auth });
      t.deepEqual([res.status, res.json().error.code], [400, 'json_too_deep'], `${path}: 400 json_too_deep (every JSON body)`);
    }
  } finally {
    await s.close();
  }
});
