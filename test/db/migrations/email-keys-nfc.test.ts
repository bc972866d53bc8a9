// Upgrading a database whose users' email keys were the lower-case text as typed: an email stored
// with combining accents gets its NFC key, so either form finds it; a key another user holds stays.
import { QueryTypes, type Sequelize } from 'sequelize';
import test from 'tape';
import { SequelizeStorage, Umzug } from 'umzug';
import { openDatabase } from '../../../src/db/index.ts';
import { MIGRATIONS_TABLE } from '../../../src/db/migrate.ts';
import { migrations } from '../../../src/db/migrations/index.ts';
import { loadDialect } from '../../../src/db/dialect/index.ts';
import { userByLogin } from '../../../src/db/users.ts';
import { testDb } from '../../helpers/dialect.ts';
import { tmpDir } from '../../helpers/tmp.ts';

const T0 = '2026-11-20 10:00:00.000 +00:00';
const NFC = 'jos\u00e9@example.com';
const NFD = 'jose\u0301@example.com';

async function migrateUpTo(sequelize: Sequelize, last: string): Promise<void> {
  const upTo = migrations.slice(0, migrations.findIndex((m) => m.name === last) + 1);
  const umzug = new Umzug({ migrations: upTo, context: sequelize.getQueryInterface(), storage: new SequelizeStorage({ sequelize, tableName: MIGRATIONS_TABLE }), logger: undefined });
  await umzug.up();
}

async function addUser(sequelize: Sequelize, username: string, email: string): Promise<void> {
  await sequelize.query(
    'INSERT INTO users (username, username_key, email, email_key, password_hash, is_admin, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    { replacements: [username, username.toLowerCase(), email, email.toLowerCase(), 'x', false, T0, T0], type: QueryTypes.INSERT },
  );
}

test('email keys in NFC: a decomposed email is found by either form; a clash keeps both users as they were', async (t) => {
  const dir = tmpDir();
  const dialect = await loadDialect();
  const old = dialect.connect(dir, testDb(dir));
  await migrateUpTo(old, '20261126-0310-01-incidents');
  await addUser(old, 'jose', NFD);
  await addUser(old, 'ana', 'Ana@example.com');
  await addUser(old, 'twin1', 'Ren\u00e9@example.com');
  await addUser(old, 'twin2', 'Rene\u0301@example.com');
  await dialect.close(old);

  const db = await openDatabase(dir, testDb(dir));
  try {
    t.equal((await userByLogin(db, NFC))?.username, 'jose', 'NFC finds the NFD email');
    t.equal((await userByLogin(db, NFD))?.username, 'jose', 'NFD finds it too');
    t.equal((await userByLogin(db, 'ANA@example.com'))?.username, 'ana', 'a plain email as before');
    const rows = await db.reader.all<{ username: string; email: string }>('SELECT username, email FROM users ORDER BY username_key');
    t.deepEqual(rows.map((r) => [r.username, r.email]), [['ana', 'Ana@example.com'], ['jose', NFD], ['twin1', 'Ren\u00e9@example.com'], ['twin2', 'Rene\u0301@example.com']], 'every user kept, emails as typed');
  } finally {
    await db.close();
  }
});
