// After a rollback of the package, an older rigd meets a database a newer rigd has migrated: it
// refuses with one line saying what to do, and leaves the data as it was.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import test from 'tape';
import { rigd } from '../helpers/cli.ts';
import { serveProcess } from '../helpers/serve-process.ts';
import { databaseUrlFor, onPostgres } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('a database migrated by a newer rigd is refused by serve and by commands, data kept', async (t) => {
  const env = { RIGD_DATA_DIR: path.join(tmpDir(), 'data') };
  const add = await rigd(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { env, input: 'ana-password' });
  t.equal(add.code, 0, 'a user is stored');
  const backup = path.join(path.dirname(env.RIGD_DATA_DIR), 'before-upgrade.sqlite');
  t.equal((await rigd(['backup', backup], { env })).code, 0, 'a backup made by this rigd');
  // The database's own client: sqlite3 on the file, or psql on the data_dir's PostgreSQL database.
  const sql = (statement: string) =>
    onPostgres
      ? execFileSync('psql', ['-qAtX', databaseUrlFor(env.RIGD_DATA_DIR), '-c', statement], { encoding: 'utf8' })
      : execFileSync('sqlite3', [path.join(env.RIGD_DATA_DIR, 'rigd.sqlite'), statement], { encoding: 'utf8' });
  sql("INSERT INTO schema_migrations (name) VALUES ('29991231-0001-from-the-future.ts')");

  const migrate = await rigd(['migrate'], { env });
  t.equal(migrate.code, 1, 'rigd migrate exits 1');
  t.match(migrate.stderr, /^rigd: the database was migrated by a newer rigd \(migration 29991231-0001-from-the-future\.ts\).*rigd restore/, 'one line naming the migration and the way out');
  t.equal(migrate.stderr.split('\n').length, 2, 'one line on stderr');

  const serve = await serveProcess(env).then(
    async (p) => {
      await p.stop();
      return { code: 0, stderr: '' };
    },
    (err: Error) => ({ code: 1, stderr: err.message }),
  );
  t.equal(serve.code, 1, "rigd serve does not start");
  t.match(serve.stderr, /exited \(1\) before listening/, "it exits 1 (systemd restarts nothing that cannot start; the operator sees why)");
  t.match(serve.stderr, /newer rigd/, 'and says why');

  const users = sql('SELECT username FROM users').trim();
  t.equal(users, 'ana', 'the stored user is still there');

  const restore = await rigd(['restore', backup], { env });
  t.equal(restore.code, 0, `rigd restore of this version's backup is the way back: ${restore.stderr}`);
  const list = await rigd(['user', 'list', '--json'], { env });
  t.equal(list.code, 0, 'commands work again after the restore');
  t.deepEqual((JSON.parse(list.stdout) as { username: string }[]).map((u) => u.username), ['ana'], 'with the data of the backup');
});
