import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { ENV_FILE, envFilePath, parseEnvFile, withEnvFile } from '../../src/config/env-file.ts';
import { loadConfig } from '../../src/config/load.ts';
import { cachedConfig, rememberConfig } from '../../src/config/cache.ts';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('parseEnvFile: systemd EnvironmentFile syntax', (t) => {
  const text = [
    '# a comment',
    '; another comment',
    '',
    'PLAIN=value',
    '  INDENTED = spaced value   ',
    'SINGLE=\'it has # and $HOME and \\n\'',
    'DOUBLE="say \\"hi\\" \\\\ \\$x \\n"',
    'JOINED="a"\'b\'c',
    'ESCAPED=a\\ b\\#c',
    'CONTINUED=one\\',
    'two',
    'MULTI="line one',
    'line two"',
    'EMPTY=',
    'no equals sign here',
    '1BAD=skipped',
    'PLAIN=later wins',
    'HASH=value # not a comment',
  ].join('\n');
  const env = parseEnvFile(text);
  t.equal(env.get('PLAIN'), 'later wins', 'a later assignment wins');
  t.equal(env.get('INDENTED'), 'spaced value', 'blanks around key and value dropped');
  t.equal(env.get('SINGLE'), 'it has # and $HOME and \\n', 'single quotes are literal');
  t.equal(env.get('DOUBLE'), 'say "hi" \\ $x \\n', 'double quotes take \\" \\\\ \\$ escapes, others stay');
  t.equal(env.get('JOINED'), 'abc', 'quoted and unquoted parts join');
  t.equal(env.get('ESCAPED'), 'a b#c', 'backslash escapes outside quotes');
  t.equal(env.get('CONTINUED'), 'onetwo', 'backslash-newline continues');
  t.equal(env.get('MULTI'), 'line one\nline two', 'quoted values span lines');
  t.equal(env.get('EMPTY'), '', 'empty value');
  t.equal(env.get('HASH'), 'value # not a comment', '# inside a value is part of it');
  t.notOk(env.has('1BAD'), 'invalid name skipped');
  t.deepEqual([...env.keys()].sort(), ['CONTINUED', 'DOUBLE', 'EMPTY', 'ESCAPED', 'HASH', 'INDENTED', 'JOINED', 'MULTI', 'PLAIN', 'SINGLE'], 'comments and lines without = are skipped');
  t.end();
});

test('withEnvFile: RIGD_* only, the real environment wins, RIGD_ENV_FILE selects or disables', (t) => {
  const dir = tmpDir();
  const file = path.join(dir, 'rigd.env');
  writeFileSync(file, 'RIGD_SERVER_PORT=4100\nRIGD_STORAGE_MINIO_SECRET_KEY="s3cr3t with space"\nMINIO_ROOT_PASSWORD=ignored\nPATH=/evil\nRIGD_ENV_FILE=/elsewhere\n');
  const env = withEnvFile({ RIGD_ENV_FILE: file, RIGD_SERVER_PORT: '4200', PATH: '/usr/bin' });
  t.equal(env.RIGD_SERVER_PORT, '4200', 'a variable of the real environment wins');
  t.equal(env.RIGD_STORAGE_MINIO_SECRET_KEY, 's3cr3t with space', 'a RIGD_ variable of the file is added');
  t.equal(env.MINIO_ROOT_PASSWORD, undefined, 'other variables of the file are not');
  t.equal(env.PATH, '/usr/bin', 'PATH untouched');
  t.equal(env.RIGD_ENV_FILE, file, 'the file cannot name another file');
  t.equal(envFilePath({}), ENV_FILE, 'default path');
  t.equal(envFilePath({ RIGD_ENV_FILE: '' }), null, 'empty RIGD_ENV_FILE: no file');
  const none = { RIGD_ENV_FILE: '' };
  t.equal(withEnvFile(none), none, 'no file read');
  t.throws(() => withEnvFile({ RIGD_ENV_FILE: path.join(dir, 'missing.env') }), /RIGD_ENV_FILE names .*missing\.env, which does not exist/, 'a named file that is missing is an error');
  t.throws(() => withEnvFile({ RIGD_ENV_FILE: dir }), /cannot read .*: EISDIR/, 'an unreadable file is an error with its reason');
  t.end();
});

test('loadConfig reads the env file; the config cache sees a changed file', (t) => {
  const dir = tmpDir();
  const file = path.join(dir, 'rigd.env');
  writeFileSync(file, '# secrets\nRIGD_STORAGE_MINIO_SECRET_KEY=\'from-file\'\nRIGD_SERVER_PORT=4100\n');
  const env = { RIGD_ENV_FILE: file, RIGD_SERVER_PORT: '4200' };
  const { config } = loadConfig({ env });
  t.equal(config.storage.minio.secret_key, 'from-file', 'secret from the env file');
  t.equal(config.server.port, 4200, 'the real environment wins');

  const cacheDirPath = path.join(dir, 'cache');
  rememberConfig({ env, dir: cacheDirPath }, config);
  t.equal(cachedConfig({ env, dir: cacheDirPath })?.storage.minio.secret_key, 'from-file', 'cache hit for the same inputs');
  writeFileSync(file, 'RIGD_STORAGE_MINIO_SECRET_KEY=rotated\n');
  t.equal(cachedConfig({ env, dir: cacheDirPath }), null, 'a changed env file misses the cache');
  t.end();
});

test('rigd.service loads the same env file and tells rigd not to read it again', (t) => {
  const unit = readFileSync(path.join(ROOT, 'systemd', 'rigd.service'), 'utf8').split('\n');
  t.ok(unit.includes(`EnvironmentFile=-${ENV_FILE}`), `EnvironmentFile=-${ENV_FILE}`);
  t.ok(unit.includes('Environment=RIGD_ENV_FILE='), 'RIGD_ENV_FILE empty under systemd (the service user need not read a 0600 file)');
  t.end();
});
