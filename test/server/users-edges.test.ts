import test from 'tape';
import { http } from '../helpers/http.ts';
import { startServer, userWithToken, type TestServer } from '../helpers/server.ts';

function put(s: TestServer, id: string, body: unknown, headers: Record<string, string> = {}) {
  return http(`${s.url}/api/v1/users/${id}`, { method: 'PUT', json: body, headers: { accept: 'application/json', ...headers } });
}

test('user ids at the edges: an id no user can have is 404 for an admin, never 500', async (t) => {
  const s = await startServer();
  try {
    const root = await userWithToken(s, 'root', { admin: true });
    for (const id of ['2147483647', '2147483648', '9007199254740991', '9007199254740993', '9999999999999999']) {
      const res = await put(s, id, { user: { rig_ui_settings: 1 } }, { authorization: root.token });
      t.equal(res.status, 404, `${id}: 404`);
      t.equal(res.json().error?.code, 'user_not_found', `${id}: user_not_found`);
    }
    const over = await put(s, '18446744073709551616', { user: { rig_ui_settings: 1 } }, { authorization: root.token });
    t.equal(over.status, 400, '20 digits: 400');
  } finally {
    await s.close();
  }
});
