import test from 'tape';
import { http } from '../helpers/http.ts';
import { startServer } from '../helpers/server.ts';

const NFC = 'jos\u00e9@example.com';
const NFD = 'jose\u0301@example.com';

test('an email written in NFC and in NFD is one email: no second user, and either form logs in', async (t) => {
  const s = await startServer();
  try {
    await s.app.users.create({ username: 'jose', email: NFC, password: 'jose-password' });
    await s.app.users.create({ username: 'other', email: NFD, password: 'other-password' }).then(
      () => t.fail('a second user with the same email in NFD was created'),
      (err: { code?: string }) => t.equal(err.code, 'email_exists', 'the NFD form is taken: email_exists'),
    );
    await s.app.users.create({ username: 'upper', email: NFD.toUpperCase(), password: 'upper-password' }).then(
      () => t.fail('a second user with the same email in NFD capitals was created'),
      (err: { code?: string }) => t.equal(err.code, 'email_exists', 'NFD in capitals: email_exists'),
    );
    t.equal((await s.app.users.list()).length, 1, 'one user');
    for (const [name, login] of [['NFC', NFC], ['NFD', NFD]]) {
      const res = await http(`${s.url}/api/v1/sessions`, { json: { login, password: 'jose-password' } });
      t.equal(res.status, 200, `login by the ${name} email: 200`);
      t.equal(res.json().data?.user?.username, 'jose', `${name}: jose`);
    }
  } finally {
    await s.close();
  }
});
