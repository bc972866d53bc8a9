// What an operator gets wrong naming backup and restore files: an empty name, a directory that does
// not exist, the capture store's copy aimed at the database's, a backup that is not there or is a
// directory. Each: one line saying what is wrong, the right exit code, nothing written, nothing lost.
import test from 'tape';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { rigd } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

function oneLine(t: test.Test, stderr: string, what: string): void {
  t.equal(stderr.trim().split('\n').length, 1, `${what}: one line on stderr (${stderr.trim()})`);
  t.doesNotMatch(stderr, /\n\s+at |SQLITE_/, `${what}: no stack trace, no driver code`);
}

test('rigd backup and restore: bad file names are refused before anything is written or replaced', async (t) => {
  const dataDir = tmpDir();
  const env = { RIGD_DATA_DIR: dataDir };
  const add = await rigd(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { env, input: 'first-password\n' });
  t.equal(add.code, 0, `a user to keep ${add.stderr}`);
  const out = tmpDir();
  const plainFile = path.join(tmpDir(), 'notes.txt');
  writeFileSync(plainFile, 'not a directory\n');
  const before = readdirSync(dataDir).sort();

  const cases: [string, string[], number, RegExp][] = [
    ['backup ""', ['backup', ''], 2, /^rigd: FILE is empty: name a new file for the backup/],
    ['backup --capture-store ""', ['backup', path.join(out, 'a.sqlite'), '--capture-store', ''], 2, /^rigd: --capture-store is empty/],
    ['backup into a missing directory', ['backup', path.join(out, 'no', 'such', 'a.sqlite')], 1, new RegExp(`^rigd: backup failed: directory ${out}/no/such does not exist: create it`)],
    ['backup under a file', ['backup', path.join(plainFile, 'a.sqlite')], 1, /^rigd: backup failed: .*notes\.txt is not a directory/],
    ['backup with the same file twice', ['backup', path.join(out, 'b.sqlite'), '--capture-store', path.join(out, '.', 'b.sqlite')], 2, /^rigd: --capture-store names the same file as the database backup/],
    ['restore ""', ['restore', ''], 2, /^rigd: FILE is empty: name a file written by rigd backup/],
    ['restore of a missing file', ['restore', path.join(out, 'missing.sqlite')], 1, new RegExp(`^rigd: restore refused: ${out}/missing\\.sqlite does not exist`)],
    ['restore of a directory', ['restore', out], 1, new RegExp(`^rigd: restore refused: ${out} is a directory, not a file written by rigd backup`)],
  ];
  for (const [what, args, code, expected] of cases) {
    const res = await rigd(args, { env });
    t.equal(res.code, code, `${what}: exit ${code}`);
    t.match(res.stderr, expected, `${what}: says what is wrong`);
    oneLine(t, res.stderr, what);
    t.equal(res.stdout, '', `${what}: nothing on stdout`);
  }
  t.deepEqual(readdirSync(out), [], 'nothing was written where the backups were to go');
  t.deepEqual(readdirSync(dataDir).sort(), before, 'data_dir: no file added, none kept aside or replaced');
  const list = await rigd(['user', 'list', '--json'], { env });
  t.deepEqual(JSON.parse(list.stdout).map((u: { username: string }) => u.username), ['ana'], 'the database still holds ana');

  // The same commands, named right, still work.
  mkdirSync(path.join(out, 'ok'));
  const good = await rigd(['backup', path.join(out, 'ok', 'one.sqlite')], { env });
  t.equal(good.code, 0, `backup to a new file in an existing directory: exit 0 ${good.stderr}`);
  const restored = await rigd(['restore', path.join(out, 'ok', 'one.sqlite')], { env });
  t.equal(restored.code, 0, `restore of that backup: exit 0 ${restored.stderr}`);
});
