// Commands run from a shell read the service's env file (RIGD_ENV_FILE here, /etc/rigd/rigd.env by
// default), as rigd.service does through EnvironmentFile=; the real environment wins over it.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { RIGD, rigd, rigdEnv } from '../helpers/cli.ts';
import { envFileDatabaseLine, hasDatabase } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

const NOBODY = 65534;

test('rigd user add/list use the data_dir named in the env file; the real environment wins', async (t) => {
  const dir = tmpDir();
  const fromFile = path.join(dir, 'data from file');
  const fromEnv = path.join(dir, 'data-from-env');
  const envFile = path.join(dir, 'rigd.env');
  writeFileSync(envFile, `# rigd secrets and settings\n; also a comment\nRIGD_DATA_DIR="${fromFile}"\nRIGD_AUTH_BCRYPT_COST='4'\n${envFileDatabaseLine(fromFile)}`);
  const env = { RIGD_ENV_FILE: envFile };

  const add = await rigd(['user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], { env, input: 'first-password' });
  t.equal(add.code, 0, `add exits 0 (${add.stderr.trim()})`);
  t.ok(hasDatabase(fromFile), 'the database is in the data_dir of the env file (quoted path with a space)');
  const list = await rigd(['user', 'list', '--json'], { env });
  t.equal(list.code, 0);
  t.deepEqual(JSON.parse(list.stdout).map((u: { username: string }) => u.username), ['ana'], 'the user is listed from there');

  mkdirSync(fromEnv); // a fresh data_dir (one that does not exist is refused: test/cli/data-dir-missing.test.ts)
  const other = await rigd(['user', 'list', '--json'], { env: { ...env, RIGD_DATA_DIR: fromEnv } });
  t.equal(other.code, 0, `list exits 0 (${other.stderr.trim()})`);
  t.deepEqual(JSON.parse(other.stdout), [], 'RIGD_DATA_DIR of the environment wins: a fresh data_dir, no users');
  t.ok(hasDatabase(fromEnv), 'database created where the environment said');

  // Same command, same environment, edited file: the config cache must not answer with the old file.
  const moved = path.join(dir, 'moved');
  mkdirSync(moved);
  writeFileSync(envFile, `RIGD_DATA_DIR=${moved}\n${envFileDatabaseLine(moved)}`);
  const again = await rigd(['user', 'list', '--json'], { env });
  t.equal(again.code, 0);
  t.deepEqual(JSON.parse(again.stdout), [], 'an edited env file takes effect at once');
  t.ok(hasDatabase(moved), 'the new data_dir is used');
  t.end();
});

test('doctor --json reports from the env file; a missing named file is one line', async (t) => {
  const dir = tmpDir();
  const envFile = path.join(dir, 'rigd.env');
  writeFileSync(envFile, 'RIGD_STORAGE_DRIVER=minio\nRIGD_STORAGE_MINIO_PORT=1\nRIGD_STORAGE_MINIO_ACCESS_KEY=rigd\nRIGD_STORAGE_MINIO_SECRET_KEY="not shown"\n');
  const res = await rigd(['doctor', '--json'], { env: { RIGD_ENV_FILE: envFile, RIGD_DATA_DIR: path.join(dir, 'data') } });
  const report = JSON.parse(res.stdout) as { checks: { check: string; status: string; message: string }[] };
  const storage = report.checks.filter((c) => c.check === 'storage');
  t.ok(storage.length > 0, 'storage checked');
  t.ok(storage.some((c) => c.status === 'fail' && c.message.includes('MinIO at http://127.0.0.1:1 ')), `the MinIO endpoint of the env file is checked: ${JSON.stringify(storage.map((c) => c.message))}`);
  t.notOk(res.stdout.includes('not shown'), 'the secret is not printed');

  const missing = await rigd(['user', 'list'], { env: { RIGD_ENV_FILE: path.join(dir, 'nope.env'), RIGD_DATA_DIR: path.join(dir, 'data') } });
  t.equal(missing.code, 1, 'exit 1');
  t.equal(missing.stderr, `rigd: RIGD_ENV_FILE names ${path.join(dir, 'nope.env')}, which does not exist\n`, 'one line');
  t.end();
});

/** Runs bin/rigd as nobody. */
function rigdAsNobody(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RIGD, ...args], { env: rigdEnv(env), uid: NOBODY, gid: NOBODY, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('an env file a non-root user cannot read: a one-line hint to use sudo, no stack trace', async (t) => {
  const dir = tmpDir();
  chmodSync(dir, 0o755);
  const envFile = path.join(dir, 'rigd.env');
  writeFileSync(envFile, 'RIGD_STORAGE_MINIO_SECRET_KEY=secret\n', { mode: 0o600 });
  const env = { RIGD_ENV_FILE: envFile, RIGD_DATA_DIR: path.join(dir, 'data'), HOME: dir };
  const res = await rigdAsNobody(['user', 'list'], env);
  t.equal(res.code, 1, 'exit 1');
  t.equal(res.stderr, `rigd: cannot read ${envFile} (permission denied), which holds the service's settings and secrets: run with sudo\n`, 'one line with the hint');
  t.equal(res.stdout, '', 'nothing on stdout');

  const doctor = await rigdAsNobody(['doctor', '--json'], env);
  t.equal(doctor.code, 1, 'doctor exits 1');
  const report = JSON.parse(doctor.stdout) as { checks: { check: string; status: string; message: string; fix: string }[] };
  t.deepEqual(report.checks.map((c) => [c.check, c.status]), [['config', 'fail']], 'doctor: the config check fails');
  t.match(report.checks[0].fix, /run rigd doctor with sudo/, 'with the fix for this case');
  t.end();
});
