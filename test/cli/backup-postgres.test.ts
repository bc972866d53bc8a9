// rigd backup / restore on PostgreSQL: pg_dump and pg_restore, the password in PGPASSWORD only.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { QueryTypes } from 'sequelize';
import test from 'tape';
import { pgDumpCommand, pgRestoreCommand } from '../../src/db/dialect/postgres/dump.ts';
import { openDatabase } from '../../src/db/index.ts';
import { rigd } from '../helpers/cli.ts';
import { databaseUrlFor, postgresOnly } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('the commands: the password goes to PGPASSWORD, never on the command line', (t) => {
  const dump = pgDumpCommand('postgres://rigd:S3cret%40x@db.example:5432/rigd?sslmode=require', '/backups/rigd.dump');
  t.equal(dump.display, "pg_dump --format=custom --no-owner --file=/backups/rigd.dump '--dbname=postgres://rigd@db.example:5432/rigd?sslmode=require'");
  t.deepEqual(dump.env, { PGPASSWORD: 'S3cret@x' });
  t.notOk(dump.args.join(' ').includes('S3cret'), 'not in the arguments');
  const restore = pgRestoreCommand('postgres://rigd@db.example/rigd', '/backups/rigd.dump');
  t.equal(restore.display, 'pg_restore --clean --if-exists --no-owner --single-transaction --dbname=postgres://rigd@db.example/rigd /backups/rigd.dump');
  t.deepEqual(restore.env, {}, 'no password: none set');
  t.end();
});

test('rigd backup runs pg_dump; rigd restore brings the data back with pg_restore', async (t) => {
  if (postgresOnly(t, 'pg_dump and pg_restore of a PostgreSQL database')) return;
  const dataDir = tmpDir();
  const url = databaseUrlFor(dataDir);
  const db = await openDatabase(dataDir, { url });
  const count = async () => (await db.sequelize.query<{ n: number }>('SELECT COUNT(*) AS n FROM users', { type: QueryTypes.SELECT, plain: true }))?.n;
  await db.writes.run((transaction) => db.models.User.create({ username: 'ana', username_key: 'ana', email: 'a@x.org', email_key: 'a@x.org', password_hash: 'h' }, { transaction }));
  const file = path.join(tmpDir(), 'rigd.dump');
  const backup = await rigd(['backup', file], { env: { RIGD_DATA_DIR: dataDir } });
  t.equal(backup.code, 0, backup.stderr);
  t.ok(existsSync(file), 'the dump is written');
  t.match(backup.stdout, /^backed up the database with: pg_dump --format=custom/, 'says the command it ran');
  await db.writes.run((transaction) => db.models.User.destroy({ where: {}, transaction }));
  t.equal(await count(), 0, 'the user is gone');
  await db.close();
  const restore = await rigd(['restore', file], { env: { RIGD_DATA_DIR: dataDir } });
  t.equal(restore.code, 0, restore.stderr);
  t.match(restore.stdout, /^restored .* with: pg_restore --clean/);
  const again = await openDatabase(dataDir, { url });
  try {
    t.equal((await again.sequelize.query<{ n: number }>('SELECT COUNT(*) AS n FROM users', { type: QueryTypes.SELECT, plain: true }))?.n, 1, 'the user is back');
  } finally {
    await again.close();
  }
});
