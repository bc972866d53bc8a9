// Another process holds the SQLite database's write lock longer than rigd waits (a stopped rigd
// serve, an open sqlite3 shell in a transaction): a writing command ends with one line that says
// what holds it up and what to do (no Sequelize warning beside it), exit 1; once the lock is gone
// the same command works and nothing stored before is lost.
import test from 'tape';
import path from 'node:path';
import sqlite3 from 'sqlite3';
import { rigd } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { sqliteOnly } from '../helpers/dialect.ts';

function exec(db: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
}

test('rigd user add while another process holds the write lock: one line, exit 1; afterwards it works', async (t) => {
  if (sqliteOnly(t, 'the SQLite file lock; PostgreSQL waits on lock_timeout (database_busy)')) return;
  const dataDir = tmpDir();
  const env = { RIGD_DATA_DIR: dataDir };
  const add = await rigd(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { env, input: 'first-password\n' });
  t.equal(add.code, 0, `a user to keep ${add.stderr}`);

  const holder = new sqlite3.Database(path.join(dataDir, 'rigd.sqlite'));
  await exec(holder, 'BEGIN IMMEDIATE');
  let res;
  try {
    res = await rigd(['user', 'add', 'bob', '--email', 'bob@example.com', '--password-stdin'], { env, input: 'bob-password\n', timeoutMs: 300_000 });
  } finally {
    await exec(holder, 'ROLLBACK');
    await new Promise<void>((resolve) => holder.close(() => resolve()));
  }
  t.equal(res.code, 1, 'exit 1');
  t.equal(res.stderr.split('\n').length, 2, `one line on stderr, nothing else: ${JSON.stringify(res.stderr)}`);
  t.match(res.stderr, /^rigd: database: SQLITE_BUSY: database is locked: another process held its write lock too long \(.*\): end that, then run this again\n$/, 'says what holds it up and what to do');
  t.equal(res.stdout, '', 'nothing on stdout');

  const again = await rigd(['user', 'add', 'bob', '--email', 'bob@example.com', '--password-stdin'], { env, input: 'bob-password\n' });
  t.equal(again.code, 0, `once the lock is gone, the same command works ${again.stderr}`);
  const list = await rigd(['user', 'list', '--json'], { env });
  t.deepEqual(JSON.parse(list.stdout).map((u: { username: string }) => u.username), ['ana', 'bob'], 'ana as before, and bob');
});
