import test from 'tape';
import { rigd } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

/** One line on stderr, no stack. */
function oneLine(t: test.Test, stderr: string, what: string): void {
  t.equal(stderr.trim().split('\n').length, 1, `${what}: one line on stderr (${stderr.trim()})`);
  t.doesNotMatch(stderr, /\n\s+at /, `${what}: no stack trace`);
}

test('rigd user set --admin --no-admin: refused (exit 2), the user unchanged', async (t) => {
  const env = { RIGD_DATA_DIR: tmpDir() };
  const add = await rigd(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin', '--admin'], { env, input: 'first-password\n' });
  t.equal(add.code, 0, `add exits 0 ${add.stderr}`);
  for (const flags of [['--admin', '--no-admin'], ['--no-admin', '--admin']]) {
    const both = await rigd(['user', 'set', 'ana', ...flags], { env });
    t.equal(both.code, 2, `${flags.join(' ')}: exit 2 (usage)`);
    t.match(both.stderr, /^rigd: --admin and --no-admin exclude each other/, 'says the flags conflict');
    oneLine(t, both.stderr, flags.join(' '));
    t.equal(both.stdout, '', 'nothing on stdout');
  }
  const list = await rigd(['user', 'list', '--json'], { env });
  t.equal(JSON.parse(list.stdout)[0].admin, true, 'ana is still an admin');
  const one = await rigd(['user', 'set', 'ana', '--no-admin'], { env });
  t.equal(one.code, 0, `--no-admin alone still works ${one.stderr}`);
  t.match(one.stdout, /not admin/);
});

test('rigd user add / passwd: a bad or taken name or email is refused before any password is asked for', async (t) => {
  const env = { RIGD_DATA_DIR: tmpDir() };
  const add = await rigd(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { env, input: 'first-password\n' });
  t.equal(add.code, 0, `add exits 0 ${add.stderr}`);
  // No --password-stdin and no terminal: the answer is about the name or email, not the missing prompt.
  const cases: [string, string[], RegExp][] = [
    ['an invalid name', ['user', 'add', 'b o b', '--email', 'bob@example.com'], /^rigd: username must be/],
    ['an empty name', ['user', 'add', '', '--email', 'bob@example.com'], /^rigd: username must be/],
    ['an invalid email', ['user', 'add', 'bob', '--email', 'bob'], /^rigd: "bob" is not an email address/],
    ['a taken name', ['user', 'add', 'ANA', '--email', 'bob@example.com'], /^rigd: user ANA already exists/],
    ['a taken email', ['user', 'add', 'bob', '--email', 'ANA@example.com'], /^rigd: email ANA@example.com is already used by ana/],
    ['passwd of an unknown user', ['user', 'passwd', 'nobody'], /^rigd: user nobody not found/],
  ];
  for (const [what, args, expected] of cases) {
    const res = await rigd(args, { env });
    t.equal(res.code, 1, `${what}: exit 1`);
    t.match(res.stderr, expected, `${what}: says what is wrong (${res.stderr.trim()})`);
    oneLine(t, res.stderr, what);
  }
  const list = await rigd(['user', 'list', '--json'], { env });
  t.deepEqual(JSON.parse(list.stdout).map((u: { username: string }) => u.username), ['ana'], 'only ana, as before');
  const ok = await rigd(['user', 'add', 'bob', '--email', 'bob@example.com', '--password-stdin'], { env, input: 'bob-password\n' });
  t.equal(ok.code, 0, `a good add still works ${ok.stderr}`);
  const passwd = await rigd(['user', 'passwd', 'bob', '--password-stdin'], { env, input: 'bob-password-2\n' });
  t.equal(passwd.code, 0, `passwd of a known user still works ${passwd.stderr}`);
});
