// rigd doctor as a child process: a healthy install passes; a missing bucket, a closed storage port,
// a read-only data_dir and a bad config each fail with the right line (and exit 1).
import test from 'tape';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { rigd, doctorLine as line } from '../helpers/cli.ts';
import { onPostgres } from '../helpers/dialect.ts';
import { closedPort } from '../helpers/storage.ts';
import { startS3Peer } from '../helpers/s3-peer.ts';
import { tmpDir } from '../helpers/tmp.ts';

/** Loopback holds an address in this range, so the VPN check passes on any test host. */
const VPN = { RIGD_VPN_CIDR: '127.0.0.0/8' };

async function installed(): Promise<string> {
  const dataDir = tmpDir();
  const m = await rigd(['migrate'], { env: { RIGD_DATA_DIR: dataDir } });
  if (m.code !== 0) throw new Error(m.stderr);
  return dataDir;
}


test('doctor: a healthy install passes, with --json', async (t) => {
  const dataDir = await installed();
  mkdirSync(path.join(dataDir, 'objects', 'captures'), { recursive: true });
  const res = await rigd(['doctor'], { env: { RIGD_DATA_DIR: dataDir, ...VPN } });
  t.equal(res.code, 0, `exit 0 ${res.stderr}`);
  for (const check of ['config', 'data_dir', 'database', 'storage', 'bucket', 'webhook', 'versions', 'vpn']) t.match(line(res.stdout, check), /^ok/, `ok ${check}`);
  t.match(line(res.stdout, 'versions'), /the embedded store keeps a queued capture's version until its job ends$/, 'versions line says what happens to a queued version');
  t.match(line(res.stdout, 'database'), onPostgres ? /connects, \d+ migrations applied, none pending, privileges ok/ : /quick_check ok, \d+ migrations applied, none pending/, 'database line says what was checked');
  t.match(line(res.stdout, 'vpn'), /^ok\s+vpn\s+lo holds 127\.0\.0\.1 in vpn\.cidr 127\.0\.0\.0\/8$/, 'vpn line names the interface');

  const json = await rigd(['doctor', '--json'], { env: { RIGD_DATA_DIR: dataDir, ...VPN } });
  const report = JSON.parse(json.stdout);
  t.equal(report.ok, true, '--json: ok true');
  t.deepEqual(Object.keys(report.checks[0]).sort(), ['check', 'message', 'status'], '--json: check, status, message (fix only when not ok)');
});

test('doctor: missing bucket, no VPN address', async (t) => {
  const dataDir = await installed();
  const res = await rigd(['doctor'], { env: { RIGD_DATA_DIR: dataDir, RIGD_VPN_CIDR: '10.251.0.0/16' } });
  t.equal(res.code, 1, 'exit 1');
  t.match(line(res.stdout, 'bucket'), /^fail\s+bucket\s+bucket captures does not exist$/, 'bucket line');
  t.match(res.stdout, /fix: start rigd serve \(it creates the bucket\)/, 'with its fix');
  t.match(line(res.stdout, 'vpn'), /^fail\s+vpn\s+no interface holds an address in vpn\.cidr 10\.251\.0\.0\/16$/, 'vpn line');
  t.equal(res.stderr, 'rigd: 2 checks failed\n', 'one line on stderr');
  const json = await rigd(['doctor', '--json'], { env: { RIGD_DATA_DIR: dataDir, RIGD_VPN_CIDR: '10.251.0.0/16' } });
  t.equal(json.code, 1, '--json: exit 1 too');
  t.deepEqual(JSON.parse(json.stdout).checks.filter((c: { status: string }) => c.status === 'fail').map((c: { check: string }) => c.check), ['bucket', 'vpn'], '--json names the failed checks');
});

test('doctor: a closed storage port', async (t) => {
  const dataDir = await installed();
  const port = await closedPort();
  const env = {
    RIGD_DATA_DIR: dataDir,
    RIGD_STORAGE_DRIVER: 'minio',
    RIGD_STORAGE_MINIO_PORT: String(port),
    RIGD_STORAGE_MINIO_ACCESS_KEY: 'rigd-test',
    RIGD_STORAGE_MINIO_SECRET_KEY: 'rigd-test-secret',
    // A closed port refuses at once; the timeout only bounds a hang. At 1 s a loaded machine ran
    // past it before the refusal came back ("did not answer bucket check within 1000 ms").
    RIGD_STORAGE_MINIO_TIMEOUT_MS: '60000',
    ...VPN,
  };
  const res = await rigd(['doctor'], { env });
  t.equal(res.code, 1, 'exit 1');
  t.match(line(res.stdout, 'storage'), new RegExp(`^fail\\s+storage\\s+MinIO at http://127\\.0\\.0\\.1:${port} cannot be reached: .*ECONNREFUSED`), 'storage line');
  t.match(res.stdout, /fix: start MinIO \(systemctl start minio\) or correct storage\.minio\.endpoint and port/, 'with its fix');
  t.match(line(res.stdout, 'database'), /^ok/, 'the database is still fine');
});

test('doctor: a read-only data_dir', async (t) => {
  const dataDir = await installed();
  mkdirSync(path.join(dataDir, 'objects', 'captures'), { recursive: true });
  // Tests run as root, which ignores file modes: a read-only bind mount is what really refuses writes.
  try {
    execFileSync('mount', ['--bind', dataDir, dataDir]);
    execFileSync('mount', ['-o', 'remount,bind,ro', dataDir]);
  } catch (err) {
    // The suite runs as root (network namespaces need it too): no mount means a broken test host.
    t.fail(`cannot make a read-only bind mount: ${String(err).split('\n')[0]}`);
    return;
  }
  try {
    const res = await rigd(['doctor'], { env: { RIGD_DATA_DIR: dataDir, ...VPN } });
    t.equal(res.code, 1, 'exit 1');
    // Found by the mount's flags (/proc/self/mountinfo), before any write is asked for.
    t.match(line(res.stdout, 'data_dir'), new RegExp(`^fail\\s+data_dir\\s+${dataDir.replace(/[.]/g, '\\.')} is on a read-only file system \\(${dataDir.replace(/[.]/g, '\\.')} on \\S+, \\w+\\): rigd cannot store anything$`), 'data_dir line');
    t.match(res.stdout, /fix: .*remount it read-write \(mount -o remount,rw /, 'with its fix');
  } finally {
    execFileSync('umount', [dataDir]);
  }
});

test('doctor: a bad config', async (t) => {
  const dir = tmpDir();
  const file = path.join(dir, 'config.yaml');
  writeFileSync(file, 'storage:\n  driver: s3\n');
  const res = await rigd(['--config', file, 'doctor'], { env: VPN });
  t.equal(res.code, 1, 'exit 1');
  t.match(line(res.stdout, 'config'), /^fail\s+config\s+config: storage\.driver: "s3" is not allowed \(expected one of: embedded, minio\)/, 'config line names the key');
  t.match(res.stdout, new RegExp(`fix: correct the key named above in ${file.replace(/[.]/g, '\\.')}`), 'with its fix');
  t.equal(res.stdout.trim().split('\n').length, 2, 'nothing else is checked without a valid config');
});

test('doctor: TLS set for a MinIO that speaks plain HTTP says so, and how to fix it', async (t) => {
  const peer = await startS3Peer();
  try {
    const dataDir = await installed();
    const env = {
      RIGD_DATA_DIR: dataDir,
      RIGD_STORAGE_DRIVER: 'minio',
      RIGD_STORAGE_MINIO_PORT: String(peer.port),
      RIGD_STORAGE_MINIO_ACCESS_KEY: peer.accessKey,
      RIGD_STORAGE_MINIO_SECRET_KEY: peer.secretKey,
      RIGD_STORAGE_MINIO_USE_SSL: 'true',
      RIGD_STORAGE_MINIO_TIMEOUT_MS: '60000',
      ...VPN,
    };
    const res = await rigd(['doctor'], { env });
    t.equal(res.code, 1, 'exit 1');
    t.match(line(res.stdout, 'config'), /no config file: built-in defaults and RIGD_ variables \(minio storage\)/, 'the config line names the driver in use (set by RIGD_STORAGE_DRIVER)');
    const storage = line(res.stdout, 'storage');
    t.match(storage, new RegExp(`^fail\\s+storage\\s+MinIO at https://127\\.0\\.0\\.1:${peer.port} does not answer TLS`), `storage line: ${storage}`);
    t.notOk(/ssl3_|openssl|\\x0a/i.test(storage), 'no OpenSSL internals in the line');
    t.match(res.stdout, /fix: .*storage\.minio\.use_ssl/, 'the fix names storage.minio.use_ssl');
  } finally {
    await peer.close();
  }
});
