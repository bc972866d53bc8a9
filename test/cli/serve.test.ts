import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { http } from '../helpers/http.ts';
import { rigd } from '../helpers/cli.ts';
import { serveProcess } from '../helpers/serve-process.ts';
import { databaseUrlFor, onPostgres } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

/** The session cookie's secret rigd generated: data_dir's file on SQLite, the secrets row on PostgreSQL. */
function storedCookieSecret(dir: string): string {
  if (!onPostgres) return readFileSync(path.join(dir, 'cookie-secret'), 'utf8');
  return execFileSync('psql', ['-qAtX', databaseUrlFor(dir), '-c', "SELECT value FROM secrets WHERE name = 'cookie-secret'"], { encoding: 'utf8' }).trim();
}

test('rigd serve: migrates a fresh data_dir, prints its address and a first-user hint', async (t) => {
  const dir = path.join(tmpDir(), 'data');
  const server = await serveProcess({ RIGD_DATA_DIR: dir });
  try {
    // stdout is a pipe: JSON lines; the ready line has the contract's text as its msg.
    const ready = JSON.parse(server.output().split('\n').find((l) => l.includes('listening on')) ?? '{}');
    t.match(ready.msg, /^rigd listening on http:\/\/127\.0\.0\.1:\d+$/, 'the listening line');
    t.equal(ready.url, server.url, 'with the address as url');
    t.match(server.output(), /no users yet: add one with {2}rigd user add NAME --email EMAIL/, 'how to add a user');
    if (onPostgres) {
      const applied = execFileSync('psql', ['-qAtX', databaseUrlFor(dir), '-c', 'SELECT COUNT(*) FROM schema_migrations'], { encoding: 'utf8' }).trim();
      t.ok(Number(applied) > 0, `database migrated (${applied} migrations)`);
    } else t.ok(existsSync(path.join(dir, 'rigd.sqlite')), 'database created');
    const secret = path.join(dir, 'cookie-secret');
    if (onPostgres) {
      t.ok(storedCookieSecret(dir).length >= 32, 'cookie secret generated into the database (shared by every node)');
      t.notOk(existsSync(secret), 'and not into data_dir');
    } else {
      t.ok(existsSync(secret), 'cookie secret generated into data_dir');
      t.equal(statSync(secret).mode & 0o777, 0o600, 'cookie secret is private');
    }
    const res = await http(`${server.url}/api/v1/sessions`, { json: { login: 'nobody', password: 'x' } });
    t.equal(res.status, 401, 'serves the API');
  } finally {
    t.equal(await server.stop('SIGINT'), 0, 'SIGINT: exit 0');
  }
});

test('settings survive a restart; the cookie secret is reused; SIGTERM exits 0', async (t) => {
  const env = { RIGD_DATA_DIR: tmpDir() };
  await rigd(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { env, input: 'ana-password' });
  const first = await serveProcess(env);
  const login = await http(`${first.url}/api/v1/sessions`, { json: { login: 'ana', password: 'ana-password' } });
  const token = login.json().token;
  const put = await http(`${first.url}/api/v1/users/1`, { method: 'PUT', json: { user: { rig_ui_settings: { kept: true } } }, headers: { authorization: token } });
  t.equal(put.status, 200);
  const secret = storedCookieSecret(env.RIGD_DATA_DIR);
  t.equal(await first.stop('SIGTERM'), 0, 'SIGTERM: exit 0');

  const second = await serveProcess(env);
  try {
    const again = await http(`${second.url}/api/v1/sessions`, { json: { login: 'ana', password: 'ana-password' } });
    t.deepEqual(again.json().data.user.rig_ui_settings, { kept: true }, 'settings survived the restart');
    const reuse = await http(`${second.url}/api/v1/users/1`, { method: 'PUT', json: { user: { rig_ui_settings: 2 } }, headers: { authorization: token } });
    t.equal(reuse.status, 200, 'a token from before the restart still works');
    t.equal(storedCookieSecret(env.RIGD_DATA_DIR), secret, 'same cookie secret');
    t.doesNotMatch(second.output(), /no users yet/, 'no first-user hint once a user exists');
  } finally {
    t.equal(await second.stop(), 0);
  }
});

test('a bad config stops start-up with one line naming the key', async (t) => {
  const dir = tmpDir();
  const file = path.join(dir, 'config.yaml');
  const { writeFileSync } = await import('node:fs');
  writeFileSync(file, 'server:\n  port: 3000\n  prot: 1\n');
  const res = await rigd(['--config', file, 'serve'], { env: { RIGD_DATA_DIR: dir } });
  t.equal(res.code, 2, 'a bad config: exit 2');
  t.match(res.stderr, new RegExp(`^rigd: config: unknown key "server\\.prot": did you mean "server\\.port"\\? \\(expected one of: host, port, [a-z_, ]+\\) \\(from ${file.replace(/[.]/g, '\\.')}\\)\n$`));
  writeFileSync(file, 'vpn: {cidr: "10.144.0.0"}\n');
  const cidr = await rigd(['--config', file, 'serve'], { env: { RIGD_DATA_DIR: dir } });
  t.equal(cidr.code, 2);
  t.match(cidr.stderr, /^rigd: config: vpn\.cidr: "10\.144\.0\.0" is not an IPv4 CIDR \(expected .*like 10\.144\.0\.0\/16\)/);
  writeFileSync(file, ': : :\n');
  const yaml = await rigd(['--config', file, 'serve'], { env: { RIGD_DATA_DIR: dir } });
  t.equal(yaml.code, 2);
  t.match(yaml.stderr, /is not valid YAML/);
  const missing = await rigd(['--config', path.join(dir, 'nope.yaml'), 'user', 'list'], { env: {} });
  t.equal(missing.code, 2);
  t.match(missing.stderr, /cannot read .*nope\.yaml: ENOENT/);
});
