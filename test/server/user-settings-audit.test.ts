import test from 'tape';
import { readAudit } from '../../src/services/audit/log.ts';
import { http } from '../helpers/http.ts';
import { startServer, userWithToken, type TestServer } from '../helpers/server.ts';

function put(s: TestServer, id: string, body: unknown, token: string) {
  return http(`${s.url}/api/v1/users/${id}`, { method: 'PUT', json: body, headers: { accept: 'application/json', authorization: token } });
}

test("an admin changing another user's settings is on record, with who and from where; a user's own change is not an entry", async (t) => {
  const s = await startServer();
  try {
    const ana = await userWithToken(s, 'ana');
    const root = await userWithToken(s, 'root', { admin: true });
    t.equal((await put(s, ana.id, { user: { rig_ui_settings: { mine: 1 } } }, ana.token)).status, 200, 'ana sets her own');
    t.equal((await put(s, ana.id, { user: { rig_ui_settings: { by: 'root' } } }, root.token)).status, 200, "root sets ana's");
    t.equal((await put(s, root.id, { user: { rig_ui_settings: 2 } }, root.token)).status, 200, 'root sets his own');
    const entries = (await readAudit(s.app.db.reader, {})).filter((e) => e.kind === 'user.settings');
    t.deepEqual(
      entries.map((e) => [e.actor, e.client, e.subject, e.details]),
      [['user:root', '127.0.0.1', 'ana', { bytes: JSON.stringify({ by: 'root' }).length }]],
      "one entry: root changed ana's settings, from loopback",
    );
  } finally {
    await s.close();
  }
});
