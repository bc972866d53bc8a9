import test from 'tape';
import { http } from '../helpers/http.ts';
import { startServer, userWithToken } from '../helpers/server.ts';

const COMMON = {
  'x-frame-options': 'SAMEORIGIN',
  'x-xss-protection': '0',
  'x-content-type-options': 'nosniff',
  'x-download-options': 'noopen',
  'x-permitted-cross-domain-policies': 'none',
  'referrer-policy': 'strict-origin-when-cross-origin',
};

test('POST /api/v1/sessions: the seed body, by login, email or username', async (t) => {
  const s = await startServer();
  try {
    const ana = await userWithToken(s, 'ana');
    for (const [key, value] of [['login', 'ana'], ['email', 'ana@example.com'], ['username', 'ana'], ['login', 'ANA@Example.com']]) {
      const res = await http(`${s.url}/api/v1/sessions`, { json: { [key]: value, password: ana.password }, headers: { accept: 'application/json' } });
      t.equal(res.status, 200, `${key}=${value}: 200`);
      const body = res.json();
      t.equal(typeof body.token, 'string', 'token is a string');
      t.ok(Buffer.from(body.token, 'base64url').length === 32, 'token is 32 random bytes');
      t.deepEqual(body, {
        token: body.token,
        data: { success: true, token: body.token, user: { id: ana.id, email: 'ana@example.com', username: 'ana', rig_ui_settings: null } },
      }, 'every field of the seed, nothing else');
      t.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      for (const [name, v] of Object.entries(COMMON)) t.equal(res.headers[name], v, `${name}`);
      t.equal(res.headers['cache-control'], 'max-age=0, private, must-revalidate', 'cache-control');
      t.equal(res.headers['vary'], 'Origin', 'vary');
      t.match(String(res.headers['etag']), /^W\/"[0-9a-f]{32}"$/, 'weak etag');
      t.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/, 'request id is a UUID');
      t.match(String(res.headers['x-runtime']), /^\d+\.\d{6}$/, 'x-runtime with 6 decimals');
      t.equal(Number(res.headers['content-length']), Buffer.byteLength(res.text), 'content-length is the body length');
    }
    const again = await http(`${s.url}/api/v1/sessions`, { json: { login: 'ana', password: ana.password } });
    const first = await http(`${s.url}/api/v1/sessions`, { json: { login: 'ana', password: ana.password } });
    t.notEqual(again.json().token, first.json().token, 'every login gets its own token');
  } finally {
    await s.close();
  }
});

test('wrong password and unknown user look the same', async (t) => {
  // Failures well under the throttle, so that no attempt is delayed by it.
  const s = await startServer({ auth: { bcrypt_cost: 10, max_failures_per_login: 1000, max_failures_per_client: 1000 } });
  try {
    const ana = await userWithToken(s, 'ana');
    const time = async (body: object) => {
      const start = process.hrtime.bigint();
      const res = await http(`${s.url}/api/v1/sessions`, { json: body });
      return { res, ms: Number(process.hrtime.bigint() - start) / 1e6 };
    };
    await time({ login: 'nobody', password: 'x' }); // first call builds the timing equaliser
    // Interleaved pairs, judged by their medians: one attempt slowed by other work on the machine
    // says nothing about rigd.
    const wrongs = [];
    const unknowns = [];
    for (let i = 0; i < 7; i++) {
      wrongs.push(await time({ login: 'ana', password: `${ana.password}x` }));
      unknowns.push(await time({ login: `nobody${i}`, password: 'whatever-password' }));
    }
    const [wrong, unknown] = [wrongs[0]!, unknowns[0]!];
    t.equal(wrong.res.status, 401);
    t.equal(unknown.res.status, 401);
    t.deepEqual(wrong.res.json(), unknown.res.json(), 'same body');
    t.equal(wrong.res.json().error.code, 'invalid_credentials');
    t.deepEqual([...new Set([...wrongs, ...unknowns].map((x) => `${x.res.status} ${x.res.text}`))], [`401 ${wrong.res.text}`], 'every attempt: the same 401');
    // Both spend one bcrypt verification: the unknown user is not answered at once.
    const median = (xs: { ms: number }[]) => xs.map((x) => x.ms).sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const [w, u] = [median(wrongs), median(unknowns)];
    t.ok(u > w * 0.4, `similar timing (median of 7: wrong ${w.toFixed(1)} ms, unknown ${u.toFixed(1)} ms)`);
  } finally {
    await s.close();
  }
});

test('failed logins are throttled per login and per client, with Retry-After', async (t) => {
  const s = await startServer({ auth: { max_failures_per_login: 3, max_failures_per_client: 5, failure_window_s: 60 } });
  try {
    const ana = await userWithToken(s, 'ana');
    await userWithToken(s, 'bob');
    for (let i = 0; i < 3; i++) {
      const res = await http(`${s.url}/api/v1/sessions`, { json: { login: 'ana', password: 'wrong-password' } });
      t.equal(res.status, 401, `failure ${i + 1}: 401`);
    }
    const blocked = await http(`${s.url}/api/v1/sessions`, { json: { login: 'ana', password: ana.password } });
    t.equal(blocked.status, 429, 'the right password is refused while the login is throttled');
    t.equal(blocked.json().error.code, 'too_many_requests');
    const retry = Number(blocked.headers['retry-after']);
    t.ok(retry > 0 && retry <= 60, `Retry-After ${retry} s`);
    const bob = await http(`${s.url}/api/v1/sessions`, { json: { login: 'bob', password: 'bob-password' } });
    t.equal(bob.status, 200, 'another login from the same client still works');
    for (let i = 0; i < 2; i++) await http(`${s.url}/api/v1/sessions`, { json: { login: `x${i}`, password: 'wrong-password' } });
    const clientBlocked = await http(`${s.url}/api/v1/sessions`, { json: { login: 'bob', password: 'bob-password' } });
    t.equal(clientBlocked.status, 429, 'the client is throttled after 5 failures whatever the login');
  } finally {
    await s.close();
  }
});

test('bad login requests: 400 JSON, never 500', async (t) => {
  const s = await startServer();
  try {
    const cases: [string, { body?: string; json?: unknown; headers?: Record<string, string> }, number, string][] = [
      ['malformed JSON', { body: '{"login":', headers: { 'content-type': 'application/json' } }, 400, 'invalid_json'],
      ['no password', { json: { login: 'ana' } }, 400, 'invalid_params'],
      ['no login', { json: { password: 'x' } }, 400, 'invalid_params'],
      ['login is a number', { json: { login: 5, password: 'x' } }, 400, 'invalid_params'],
      ['body is an array', { json: [1, 2] }, 400, 'invalid_params'],
      ['form body', { body: 'login=a&password=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 415, 'unsupported_media_type'],
      ['text body', { body: 'hello', headers: { 'content-type': 'text/plain' } }, 415, 'unsupported_media_type'],
      ['5 MiB body', { json: { login: 'a', password: 'x'.repeat(5 * 1024 * 1024) } }, 413, 'payload_too_large'],
    ];
    for (const [name, opts, status, code] of cases) {
      const res = await http(`${s.url}/api/v1/sessions`, { method: 'POST', ...opts });
      t.equal(res.status, status, `${name}: ${status}`);
      const body = res.json();
      t.equal(body.success, false, `${name}: success false`);
      t.equal(body.error.code, code, `${name}: code ${code}`);
      t.equal(typeof body.error.message, 'string', `${name}: a message`);
      t.notOk(/at .*\.ts:\d+/.test(res.text), `${name}: no stack trace`);
    }
  } finally {
    await s.close();
  }
});

test('DELETE /api/v1/sessions revokes the presented token', async (t) => {
  const s = await startServer();
  try {
    const ana = await userWithToken(s, 'ana');
    const put = (token: string) => http(`${s.url}/api/v1/users/${ana.id}`, { method: 'PUT', json: { user: { rig_ui_settings: 1 } }, headers: { authorization: token } });
    t.equal((await put(ana.token)).status, 200, 'token works');
    const del = await http(`${s.url}/api/v1/sessions`, { method: 'DELETE', headers: { authorization: ana.token } });
    t.equal(del.status, 200);
    t.deepEqual(del.json(), { success: true, data: { username: 'ana' } }, 'the envelope: the user whose session ended');
    const after = await put(ana.token);
    t.equal(after.status, 401, 'revoked token: 401');
    t.equal(after.json().error.code, 'invalid_token');
    t.equal((await http(`${s.url}/api/v1/sessions`, { method: 'DELETE' })).status, 401, 'DELETE without a token: 401');
  } finally {
    await s.close();
  }
});
