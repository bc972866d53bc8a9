import test from 'tape';
import { http } from '../helpers/http.ts';
import { rigd } from '../helpers/cli.ts';
import { serveProcess } from '../helpers/serve-process.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('rigd user add/list/passwd/remove on a fresh data_dir', async (t) => {
  const env = { RIGD_DATA_DIR: `${tmpDir()}/fresh/nested` };
  const add = await rigd(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { env, input: 'first-password\n' });
  t.equal(add.code, 0, `add exits 0 (${add.stderr.trim()})`);
  t.match(add.stdout, /added user ana \(id 1\)/);
  const admin = await rigd(['user', 'add', 'root', '--email', 'root@example.com', '--password-stdin', '--admin', '--json'], { env, input: 'root-password' });
  t.equal(admin.code, 0);
  const added = JSON.parse(admin.stdout);
  t.equal(added.admin, true, 'added as admin, JSON');

  const dup = await rigd(['user', 'add', 'ANA', '--email', 'other@example.com', '--password-stdin'], { env, input: 'first-password' });
  t.equal(dup.code, 1, 'duplicate username (any case): exit 1');
  t.equal(dup.stderr.trim().split('\n').length, 1, 'one line on stderr');
  t.match(dup.stderr, /^rigd: user ANA already exists/);
  const dupEmail = await rigd(['user', 'add', 'ann', '--email', 'ANA@example.com', '--password-stdin'], { env, input: 'first-password' });
  t.equal(dupEmail.code, 1, 'duplicate email: exit 1');
  t.match(dupEmail.stderr, /email ANA@example.com is already used by ana/);

  const list = await rigd(['user', 'list', '--json'], { env });
  t.equal(list.code, 0);
  const users = JSON.parse(list.stdout);
  t.deepEqual(users.map((u: { username: string }) => u.username), ['ana', 'root'], '--json is pure JSON with both users');
  t.deepEqual(Object.keys(users[0]).sort(), ['admin', 'created_at', 'email', 'id', 'username']);
  t.equal(list.stderr, '', 'nothing on stderr');
  const plain = await rigd(['user', 'list'], { env });
  t.match(plain.stdout, /^ID\s+USERNAME\s+EMAIL\s+ADMIN\s+CREATED\n1\s+ana\s+ana@example.com/, 'a table');

  const long = await rigd(['user', 'passwd', 'ana', '--password-stdin'], { env, input: 'é'.repeat(37) });
  t.equal(long.code, 1, 'a 74-byte password is refused');
  t.match(long.stderr, /longer than 72 bytes/);
  const short = await rigd(['user', 'passwd', 'ana', '--password-stdin'], { env, input: 'short' });
  t.equal(short.code, 1, 'a short password is refused');

  const rm = await rigd(['user', 'remove', 'root'], { env });
  t.equal(rm.code, 0);
  const after = JSON.parse((await rigd(['user', 'list', '--json'], { env })).stdout);
  t.deepEqual(after.map((u: { username: string }) => u.username), ['ana'], 'removed');
  const missing = await rigd(['user', 'remove', 'root'], { env });
  t.equal(missing.code, 1, 'removing an unknown user: exit 1');
  t.match(missing.stderr, /^rigd: user root not found\n$/);
});

test('usage errors exit 2 with one clear line', async (t) => {
  const env = { RIGD_DATA_DIR: tmpDir() };
  const cases: [string[], RegExp][] = [
    [['user', 'add', 'ana'], /required option '-e, --email <email>'/],
    [['user', 'frob'], /unknown command 'frob'/],
    [['nonsense'], /unknown command 'nonsense'/],
    [['user', 'add', 'ana', '--email', 'a@b.c'], /no terminal to ask for a password: pass --password-stdin/],
    [['serve', '--port', 'eighty'], /--port must be 0-65535/],
  ];
  for (const [args, message] of cases) {
    const res = await rigd(args, { env });
    t.equal(res.code, 2, `${args.join(' ')}: exit 2`);
    t.match(res.stderr, message, `${args.join(' ')}: says what is wrong`);
    t.equal(res.stdout, '', `${args.join(' ')}: nothing on stdout`);
  }
  const badConfig = await rigd(['user', 'list'], { env: { ...env, RIGD_SERVER_PORT: 'x' } });
  t.equal(badConfig.code, 2, 'bad config: exit 2');
  t.equal(badConfig.stderr, 'rigd: config: server.port: "x" is not a number (expected an integer from 0 to 65535) (from RIGD_SERVER_PORT)\n', 'names the key, the value, what is allowed and the source');
  const version = await rigd(['--version'], { env });
  t.equal(version.code, 0);
  t.match(version.stdout, /^\d+\.\d+\.\d+\n$/, '--version');
});

test('a password changed by the CLI works against a running server at once', async (t) => {
  const env = { RIGD_DATA_DIR: tmpDir() };
  await rigd(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { env, input: 'old-password' });
  const server = await serveProcess(env);
  try {
    const login = (password: string) => http(`${server.url}/api/v1/sessions`, { json: { login: 'ana', password } });
    const before = await login('old-password');
    t.equal(before.status, 200, 'old password works');
    const token = before.json().token;
    const passwd = await rigd(['user', 'passwd', 'ana', '--password-stdin'], { env, input: 'new-password\n' });
    t.equal(passwd.code, 0, `passwd while serving (${passwd.stderr.trim()})`);
    t.equal((await login('old-password')).status, 401, 'old password refused');
    t.equal((await login('new-password')).status, 200, 'new password works');
    const put = await http(`${server.url}/api/v1/users/1`, { method: 'PUT', json: { user: { rig_ui_settings: 1 } }, headers: { authorization: token } });
    t.equal(put.status, 401, 'sessions opened with the old password are ended');
    const add = await rigd(['user', 'add', 'bob', '--email', 'bob@example.com', '--password-stdin'], { env, input: 'bob-password' });
    t.equal(add.code, 0, 'a user added while serving...');
    t.equal((await http(`${server.url}/api/v1/sessions`, { json: { login: 'bob', password: 'bob-password' } })).status, 200, '...logs in at once');
  } finally {
    t.equal(await server.stop(), 0, 'SIGTERM: exit 0');
  }
});
