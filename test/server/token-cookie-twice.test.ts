// A request carrying the `token` cookie more than once: 401 invalid_token saying the cookie is given
// more than once (not missing_token, which says none was sent), on every route that takes a user
// token; an Authorization header still wins over the cookies.
import test from 'tape';
import { http } from '../helpers/http.ts';
import { startServer, userWithToken } from '../helpers/server.ts';

test('the token cookie twice: 401 invalid_token saying so; the Authorization header still wins', async (t) => {
  const s = await startServer();
  try {
    const ana = await userWithToken(s, 'ana');
    const body = { user: { rig_ui_settings: 'x' } };
    const put = (headers: Record<string, string>) =>
      http(`${s.url}/api/v1/users/${ana.id}`, { method: 'PUT', json: body, headers: { accept: 'application/json', ...headers } });
    const cases: [string, string][] = [
      ['the same token twice', `token=${ana.token}; token=${ana.token}`],
      ['two different values', `token=${ana.token}; token=other`],
      ['among other cookies', `a=1; token=${ana.token}; b=2; token=${ana.token}`],
    ];
    for (const [name, cookie] of cases) {
      const res = await put({ cookie });
      t.equal(res.status, 401, `${name}: 401`);
      t.deepEqual(
        [res.json().error.code, res.json().error.message],
        ['invalid_token', 'the token cookie is given more than once: send one token cookie, or the token in the Authorization header'],
        `${name}: says what is wrong`,
      );
    }
    const header = await put({ authorization: ana.token, cookie: `token=a; token=b` });
    t.equal(header.status, 200, 'the Authorization header wins over the cookies');
    const once = await put({ cookie: `token=${ana.token}` });
    t.equal(once.status, 200, 'the cookie once: 200');
    const none = await put({});
    t.equal(none.json().error.code, 'missing_token', 'no token at all: still missing_token');
    const logout = await http(`${s.url}/api/v1/sessions`, { method: 'DELETE', headers: { accept: 'application/json', cookie: `token=${ana.token}; token=${ana.token}` } });
    t.equal(logout.status, 401, 'another route with a user token: the same answer');
    t.equal(logout.json().error.code, 'invalid_token');
  } finally {
    await s.close();
  }
  t.end();
});
