// A RIGD_* variable rigd does not know (a misspelling) is named on stderr with the nearest real one
// by every command, serve included, and listed by `rigd doctor` as a warning; the command still runs.
// An unknown key in the config file is refused, also naming the nearest real key.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { rigd } from '../helpers/cli.ts';
import { serveProcess } from '../helpers/serve-process.ts';
import { envFileDatabaseLine } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

const warning = (name: string, meant: string) => `rigd: warning: ${name} is not a rigd variable and is ignored (did you mean ${meant}?)\n`;

test('a misspelled RIGD_ variable: one line naming it and the nearest real one; the command still runs', async (t) => {
  const dir = tmpDir();
  const env = { RIGD_DATA_DIR: dir, RIGD_DATABSE_URL: 'postgres://x@db/rigd', RIGD_DATA_DIRR: '/elsewhere' };
  // Twice: the second run answers from the config cache, and must warn all the same.
  for (const run of ['first', 'cached']) {
    const res = await rigd(['rigs', '--json'], { env });
    t.equal(res.code, 0, `${run}: the command runs (${res.stderr.trim()})`);
    t.deepEqual(JSON.parse(res.stdout), [], `${run}: stdout is the JSON alone`);
    t.equal(res.stderr, warning('RIGD_DATABSE_URL', 'RIGD_DATABASE_URL') + warning('RIGD_DATA_DIRR', 'RIGD_DATA_DIR'), `${run}: one line for each, in name order`);
  }
  t.end();
});

test('no warning for the real names, the variables that are not config keys and the webhook ones', async (t) => {
  const dir = tmpDir();
  const envFile = path.join(dir, 'rigd.env');
  writeFileSync(envFile, 'RIGD_LOG_LEVEL=warn\n');
  const env = {
    RIGD_DATA_DIR: dir,
    RIGD_ENV_FILE: envFile,
    RIGD_SERVER_PORT: '4000',
    RIGD_NOTIFY_WEBHOOKS_0_URL: 'http://127.0.0.1:9/hook',
    RIGD_NOTIFY_WEBHOOKS_0_SECRET: 'hook-secret',
    RIGD_TEST_STOP_AT: 'nowhere',
    RIGD_PACKAGE_CACHE: '/tmp/x',
  };
  const res = await rigd(['rigs', '--json'], { env });
  t.equal(res.code, 0, res.stderr.trim());
  t.equal(res.stderr, '', 'nothing on stderr');
  t.end();
});

test('a misspelled variable in the environment file is named too; one far from every name gets the pattern', async (t) => {
  const dir = tmpDir();
  const envFile = path.join(dir, 'rigd.env');
  writeFileSync(envFile, `RIGD_DATA_DIR=${dir}\n${envFileDatabaseLine(dir)}RIGD_STORAGE_MINIO_SECRETKEY=s3cr3t\nRIGD_WHATEVER_THIS_IS=1\n`);
  const res = await rigd(['uploads', '--json'], { env: { RIGD_ENV_FILE: envFile } });
  t.equal(res.code, 0, res.stderr.trim());
  t.equal(
    res.stderr,
    warning('RIGD_STORAGE_MINIO_SECRETKEY', 'RIGD_STORAGE_MINIO_SECRET_KEY') +
      'rigd: warning: RIGD_WHATEVER_THIS_IS is not a rigd variable and is ignored (a config key is RIGD_<SECTION>_<KEY>, see docs/configuration.md)\n',
  );
  t.doesNotMatch(res.stderr, /s3cr3t/, 'the value is never shown');
  t.end();
});

test('rigd serve names it on stderr and still serves', async (t) => {
  const server = await serveProcess({ RIGD_DATA_DIR: tmpDir(), RIGD_SERVR_PORT: '4000' });
  try {
    t.ok(server.output().includes(warning('RIGD_SERVR_PORT', 'RIGD_SERVER_PORT')), 'the warning line');
    t.ok(server.url.startsWith('http://127.0.0.1:'), 'serving');
  } finally {
    t.equal(await server.stop(), 0);
  }
  t.end();
});

test('rigd doctor lists it as a warning', async (t) => {
  const dir = tmpDir();
  const res = await rigd(['doctor', '--json'], { env: { RIGD_DATA_DIR: dir, RIGD_DATA_DIRR: '/elsewhere' } });
  const checks = JSON.parse(res.stdout).checks as { check: string; status: string; message: string; fix?: string }[];
  const env = checks.filter((c) => c.check === 'environment');
  t.deepEqual(env, [
    {
      check: 'environment',
      status: 'warn',
      message: 'RIGD_DATA_DIRR is not a rigd variable and is ignored (did you mean RIGD_DATA_DIR?)',
      fix: 'rename it to RIGD_DATA_DIR (in the environment or /etc/rigd/rigd.env), or remove it',
    },
  ]);
  const clean = await rigd(['doctor', '--json'], { env: { RIGD_DATA_DIR: dir } });
  t.notOk(JSON.parse(clean.stdout).checks.some((c: { check: string }) => c.check === 'environment'), 'no such line without one');
  t.end();
});

test('an unknown key in the config file is refused naming the nearest real key', async (t) => {
  const dir = tmpDir();
  const file = path.join(dir, 'config.yaml');
  writeFileSync(file, 'storage:\n  drivr: minio\n');
  const res = await rigd(['--config', file, 'rigs'], { env: { RIGD_DATA_DIR: dir } });
  t.equal(res.code, 2, 'exit 2');
  t.match(res.stderr, /^rigd: config: unknown key "storage\.drivr": did you mean "storage\.driver"\? \(expected one of: .*driver.*\) \(from .*config\.yaml\)\n$/);
  t.end();
});
