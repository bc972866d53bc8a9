import { chmodSync, existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { cachedConfig, rememberConfig } from '../../src/config/cache.ts';
import { loadConfig } from '../../src/config/load.ts';
import { rigd } from '../helpers/cli.ts';
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
  t.equal(statSync(entry).mode & 0o777, 0o600, 'the entry is private (it holds secrets)');
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
