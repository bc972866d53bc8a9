import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { cachedConfig, rememberConfig } from '../../src/config/cache.ts';
import { loadConfig } from '../../src/config/load.ts';
import { rigd } from '../helpers/cli.ts';
import { databaseUrlFor, onPostgres } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('a validated config is remembered for exactly the same inputs', (t) => {
  const dir = tmpDir();
  const cache = path.join(dir, 'cache');
  const file = path.join(dir, 'config.yaml');
  writeFileSync(file, 'server:\n  port: 4100\n');
  const env = { RIGD_DATA_DIR: path.join(dir, 'data') };
  const req = { file, env, dir: cache };
  t.equal(cachedConfig(req), null, 'nothing remembered yet');
  const { config } = loadConfig(req);
  rememberConfig(req, config);
  t.deepEqual(cachedConfig(req), config, 'the same inputs: the same config');
  const entry = path.join(cache, readdirSync(cache)[0]);
  t.equal(statSync(entry).mode & 0o777, 0o600, 'the entry is private');
  t.equal(statSync(cache).mode & 0o777, 0o700, 'and so is its directory');

  t.equal(cachedConfig({ ...req, env: { ...env, RIGD_SERVER_PORT: '4200' } }), null, 'another RIGD_ variable: not remembered');
  t.equal(cachedConfig({ ...req, overrides: { server: { port: 1 } } }), null, 'other flags: not remembered');
  writeFileSync(file, 'server:\n  port: 4101\n');
  t.equal(cachedConfig(req), null, 'the file changed: not remembered');
  writeFileSync(file, 'server:\n  port: 4100\n');
  t.deepEqual(cachedConfig(req), config, 'the same bytes again: remembered');
  writeFileSync(entry, '{not json');
  t.equal(cachedConfig(req), null, 'a damaged entry is ignored');
  chmodSync(cache, 0o500);
  rememberConfig(req, config);
  t.pass('an unwritable cache directory is no error');
  chmodSync(cache, 0o700);
  t.end();
});

test('the CLI remembers good configs and fails on a bad one every time', async (t) => {
  const dir = tmpDir();
  const cacheHome = path.join(dir, 'xdg');
  const file = path.join(dir, 'config.yaml');
  const env = { RIGD_DATA_DIR: path.join(dir, 'data'), XDG_CACHE_HOME: cacheHome };
  mkdirSync(env.RIGD_DATA_DIR); // read-only commands refuse a data_dir that does not exist
  writeFileSync(file, 'rigs:\n  online_after_s: 60\n');
  const first = await rigd(['--config', file, 'user', 'list', '--json'], { env });
  t.equal(first.code, 0, 'first run validates');
  t.ok(existsSync(path.join(cacheHome, 'rigd')) && readdirSync(path.join(cacheHome, 'rigd')).length === 1, 'and remembers');
  const second = await rigd(['--config', file, 'user', 'list', '--json'], { env });
  t.equal(second.code, 0, 'second run from memory');
  t.equal(second.stdout, first.stdout, 'same answer');
  writeFileSync(file, 'rigs:\n  online_after_s: nope\n');
  for (let i = 0; i < 2; i++) {
    const bad = await rigd(['--config', file, 'user', 'list'], { env });
    t.equal(bad.code, 2, `bad config, run ${i + 1}: exit 2`);
    t.match(bad.stderr, /^rigd: config: rigs\.online_after_s: "nope" is not a number/, 'names the key');
  }
});

const SECRETS = {
  cookie: 'cookie-secret-0123456789-abcdefghij-KLMNOP',
  minio: 'minio-secret-key-4f1e2d',
  webhook: 'webhook-token-9a8b7c6d5e',
  dbPassword: 'db-password-77e1',
};

/** Every file below dir (links not followed), with its bytes. */
function filesUnder(dir: string): { file: string; text: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return filesUnder(p);
    return d.isFile() ? [{ file: p, text: readFileSync(p, 'latin1') }] : [];
  });
}

/** The files below dir that hold one of the secrets, as "file: secret". */
function holding(dir: string, secrets: string[]): string[] {
  return filesUnder(dir).flatMap(({ file, text }) => secrets.filter((s) => text.includes(s)).map((s) => `${path.relative(dir, file)}: ${s}`));
}

test('an entry keeps no secret; a hit reads them back from the same inputs, exactly', (t) => {
  const dir = tmpDir();
  const cache = path.join(dir, 'cache');
  const file = path.join(dir, 'config.yaml');
  writeFileSync(file, `server:\n  cookie_secret: "${SECRETS.cookie}"\ningest:\n  webhook_token: ${SECRETS.webhook}\n`);
  const dbUrl = `postgres://rigd:${SECRETS.dbPassword}@db.example:5432/rigd`;
  const env = {
    RIGD_DATA_DIR: path.join(dir, 'data'),
    RIGD_STORAGE_MINIO_SECRET_KEY: SECRETS.minio,
    RIGD_DATABASE_URL: dbUrl,
    RIGD_DATABASE_DIRECT_URL: dbUrl.replace('db.example', 'db-direct.example'),
    RIGD_CLUSTER_SINGLE_NODE: 'true',
  };
  const req = { file, env, dir: cache };
  const { config } = loadConfig(req);
  t.equal(config.server.cookie_secret, SECRETS.cookie, 'the config holds the secrets');
  rememberConfig(req, config);
  t.equal(readdirSync(cache).length, 1, 'one entry written');
  t.deepEqual(holding(cache, Object.values(SECRETS)), [], 'no file of the cache holds a secret');
  t.deepEqual(cachedConfig(req), config, 'a hit is the validated config, secrets included');
  t.equal(cachedConfig({ ...req, env: { ...env, RIGD_STORAGE_MINIO_SECRET_KEY: 'another-secret' } }), null, 'another secret: not remembered');

  // A secret that stands in no input as it is (here a YAML escape): no entry, validated every time.
  writeFileSync(file, `server:\n  cookie_secret: "${SECRETS.cookie.replace('-', '\\x2d')}"\n`);
  const escaped = loadConfig(req).config;
  t.equal(escaped.server.cookie_secret, SECRETS.cookie, 'the escape gives the same secret');
  rememberConfig(req, escaped);
  t.equal(cachedConfig(req), null, 'not remembered');
  t.deepEqual(readdirSync(cache), [], 'and the entry for these paths is gone');
  t.end();
});

/** A temporary HOME, a config file holding secrets (one more in the environment), and the environment to run rigd with. */
function withSecrets(t: test.Test) {
  const dir = tmpDir();
  const home = path.join(dir, 'home');
  mkdirSync(home);
  const file = path.join(dir, 'config.yaml');
  writeFileSync(file, `server:\n  cookie_secret: "${SECRETS.cookie}"\ningest:\n  webhook_token: '${SECRETS.webhook}'\n`);
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir); // read-only commands refuse a data_dir that does not exist
  const env: Record<string, string> = { HOME: home, RIGD_DATA_DIR: dataDir, RIGD_STORAGE_MINIO_SECRET_KEY: SECRETS.minio };
  const secrets = [SECRETS.cookie, SECRETS.webhook, SECRETS.minio];
  if (onPostgres) {
    // The test cluster trusts local connections: the password is carried, not checked.
    const url = new URL(databaseUrlFor(dataDir));
    url.password = SECRETS.dbPassword;
    env.RIGD_DATABASE_URL = url.toString();
    secrets.push(SECRETS.dbPassword);
  } else t.comment('SQLite: no database password to carry');
  return { home, file, env, secrets };
}

test('commands run with secrets leave none of them in any file under $HOME', async (t) => {
  const { home, file, env, secrets } = withSecrets(t);
  let listed: string | null = null;
  for (const args of [['user', 'list', '--json'], ['user', 'list', '--json'], ['rigs']]) {
    const res = await rigd(['--config', file, ...args], { env });
    t.equal(res.code, 0, `rigd ${args.join(' ')}: exit 0 ${res.stderr.trim()}`);
    if (args[0] === 'user') {
      t.equal(res.stdout, listed ?? res.stdout, 'the same answer, from the cache the second time');
      listed = res.stdout;
    }
  }
  t.ok(filesUnder(home).some(({ file: f }) => f.startsWith(path.join(home, '.cache', 'rigd') + path.sep)), 'the CLI keeps its cache under $HOME/.cache/rigd');
  t.deepEqual(holding(home, secrets), [], 'no file under $HOME holds a secret');
});

test("an earlier version's entries (secrets and all) are deleted by the next command; other files stay", async (t) => {
  const { home, file, env, secrets } = withSecrets(t);
  const cache = path.join(home, '.cache', 'rigd');
  mkdirSync(cache, { recursive: true });
  const old = path.join(cache, `config-${'ab'.repeat(16)}.json`);
  writeFileSync(old, JSON.stringify({ key: 'k', config: { server: { cookie_secret: SECRETS.cookie }, ingest: { webhook_token: SECRETS.webhook } } }));
  writeFileSync(`${old}.0a1b2c3d4e5f.tmp`, JSON.stringify({ storage: { minio: { secret_key: SECRETS.minio } } }));
  writeFileSync(path.join(cache, 'notes.txt'), 'mine\n');
  t.notDeepEqual(holding(home, secrets), [], 'the old entries hold secrets');
  const res = await rigd(['--config', file, 'user', 'list', '--json'], { env });
  t.equal(res.code, 0, `a command ran ${res.stderr.trim()}`);
  t.deepEqual(holding(home, secrets), [], 'no file under $HOME holds a secret');
  t.ok(existsSync(path.join(cache, 'notes.txt')), 'a file that is no entry stays');
  t.equal(readdirSync(cache).filter((n) => n.startsWith('config-')).length, 0, 'the old entries are gone');
});
