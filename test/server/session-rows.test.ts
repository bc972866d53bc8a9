import test from 'tape';
import { http } from '../helpers/http.ts';
import { startServer, userWithToken } from '../helpers/server.ts';

test('expired sessions do not pile up: a login removes every expired session row; live ones stay', async (t) => {
  // A bound above the 21 sessions made here: this is about expired rows, not the per-user bound.
  const s = await startServer({ auth: { max_sessions_per_user: 100 } });
  try {
    const { Session } = s.app.db.models;
    const ana = await userWithToken(s, 'ana');
    const bob = await userWithToken(s, 'bob');
    for (let i = 0; i < 20; i++) {
      const res = await http(`${s.url}/api/v1/sessions`, { json: { login: 'ana', password: ana.password } });
      t.equal(res.status, 200, `login ${i + 1}`);
    }
    t.equal(await Session.count(), 22, 'one row per login');
    // Every session of ana's ends its lifetime (as 30 days later); bob's stays live.
    const anaUser = await s.app.users.getByName('ana');
    await Session.update({ expires_at: new Date(Date.now() - 1000) }, { where: { user_id: anaUser.id } });

    const login = await http(`${s.url}/api/v1/sessions`, { json: { login: 'bob', password: bob.password } });
    t.equal(login.status, 200, 'another login');
    t.equal(await Session.count({ where: { user_id: anaUser.id } }), 0, "ana's expired session rows are gone");
    t.equal(await Session.count(), 2, "bob's two live sessions stay");
    const put = await http(`${s.url}/api/v1/users/${bob.id}`, { method: 'PUT', json: { user: { rig_ui_settings: 1 } }, headers: { authorization: bob.token } });
    t.equal(put.status, 200, "bob's first token still works");
    const expired = await http(`${s.url}/api/v1/users/${ana.id}`, { method: 'PUT', json: { user: { rig_ui_settings: 1 } }, headers: { authorization: ana.token } });
    t.equal(expired.status, 401, "ana's removed session: 401");
  } finally {
    await s.close();
  }
});
