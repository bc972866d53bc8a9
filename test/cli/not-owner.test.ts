// test: shares etc-passwd (creates and removes a system user)
// An operator runs rigd without sudo on data_dir of the service user (or of root): the one failure
// line says whose data_dir it is and how to run the command as that user. Nothing is written.
import test from 'tape';
import { chmodSync, chownSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { rigd } from '../helpers/cli.ts';
import { systemUser, type SystemUser } from '../helpers/system-user.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { sqliteOnly } from '../helpers/dialect.ts';

const owner: SystemUser = systemUser('rigdtest-cli');
process.on('exit', () => owner.remove());

/** The operator: not root, not data_dir's owner. */
const operator = { uid: 65534, gid: 65534 };

/** data_dir with a database, owned by uid:gid, readable by everyone, writable by its owner only. */
async function dataDirOf(uid: number, gid: number): Promise<string> {
  const parent = tmpDir();
  chmodSync(parent, 0o755);
  const dir = path.join(parent, 'data');
  mkdirSync(dir, { mode: 0o755 });
  const env = { RIGD_DATA_DIR: dir };
  const add = await rigd(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { env, input: 'first-password\n' });
  if (add.code !== 0) throw new Error(`user add: ${add.stderr}`);
  chownSync(dir, uid, gid);
  for (const name of readdirSync(dir)) chownSync(path.join(dir, name), uid, gid);
  return dir;
}

test('rigd run as a user who may not write data_dir: the failure names the owner and the way to run it', async (t) => {
  if (sqliteOnly(t, 'the database file in data_dir; on PostgreSQL the database is not in data_dir')) return;
  const cases: [string, SystemUser | { name: string; uid: number; gid: number }, RegExp][] = [
    ['the service user', owner, /; data_dir \S+ belongs to rigdtest-cli: run rigd as that user \(sudo -u rigdtest-cli rigd \.\.\.\)$/],
    ['root', { name: 'root', uid: 0, gid: 0 }, /; data_dir \S+ belongs to root: run rigd with sudo$/],
  ];
  for (const [whose, who, hint] of cases) {
    const dataDir = await dataDirOf(who.uid, who.gid);
    const env = { RIGD_DATA_DIR: dataDir };
    const before = readdirSync(dataDir).sort();
    // A write always fails; a read may succeed (SQLite reads a WAL database read-only when its
    // -wal and -shm are there): when it fails, its line says the same.
    const commands: [string, string[], boolean, string?][] = [
      ['user add', ['user', 'add', 'bob', '--email', 'bob@example.com', '--password-stdin'], true, 'bob-password\n'],
      ['backup', ['backup', path.join(tmpDir(), 'copy.sqlite')], true],
      ['rigs', ['rigs'], false],
      ['user list', ['user', 'list'], false],
      ['migrate', ['migrate'], false],
    ];
    for (const [name, args, fails, input] of commands) {
      const res = await rigd(args, { env, input, user: operator });
      if (!fails && res.code === 0) {
        t.pass(`${whose}'s data_dir, rigd ${name} as nobody: read without writing`);
        continue;
      }
      t.equal(res.code, 1, `${whose}'s data_dir, rigd ${name} as nobody: exit 1`);
      const line = res.stderr.trim();
      t.equal(line.split('\n').length, 1, `one line: ${line}`);
      t.match(line, /^rigd: .*(readonly|SQLITE_READONLY|SQLITE_CANTOPEN|EACCES|database cannot be written)/, 'says what failed');
      t.match(line, hint, `and whose data_dir it is: ${whose}`);
    }
    t.deepEqual(readdirSync(dataDir).sort(), before, `${whose}'s data_dir: nothing added`);
    const list = await rigd(['user', 'list', '--json'], { env });
    t.deepEqual(JSON.parse(list.stdout).map((u: { username: string }) => u.username), ['ana'], 'run as root: the database holds ana as before');
  }
  // A data_dir that does not exist, where this user may not create it: no advice to use sudo.
  const parent = tmpDir();
  chmodSync(parent, 0o755);
  const typo = path.join(parent, 'typo');
  // (a command that creates data_dir: one that only reads refuses a missing one, test/cli/data-dir-missing.test.ts)
  const missing = await rigd(['migrate'], { env: { RIGD_DATA_DIR: typo }, user: operator });
  t.equal(missing.code, 1, 'a data_dir nobody may create: exit 1');
  t.match(missing.stderr.trim(), new RegExp(`; data_dir ${typo} does not exist and this user may not create it: check data_dir \\(or RIGD_DATA_DIR\\)$`), `says it does not exist: ${missing.stderr.trim()}`);
  t.doesNotMatch(missing.stderr, /sudo/, 'no advice to run it with sudo');
  t.deepEqual(readdirSync(parent), [], 'nothing created');

  // Its own data_dir: no hint, whatever the failure.
  const mine = await dataDirOf(operator.uid, operator.gid);
  const ok = await rigd(['user', 'list'], { env: { RIGD_DATA_DIR: mine }, user: operator });
  t.equal(ok.code, 0, `nobody on its own data_dir: exit 0 ${ok.stderr}`);
});
