// rigd doctor with storage.minio.endpoint written as a URL without a port: the storage line names
// the scheme's port it tried (443 for https), not the port key's default 9000.
import test from 'tape';
import { rigd, doctorLine as line } from '../helpers/cli.ts';
import { startS3Peer } from '../helpers/s3-peer.ts';
import { tmpDir } from '../helpers/tmp.ts';

/** A migrated data_dir and the environment of a doctor on MinIO at `endpoint` with these keys. */
async function minioEnv(t: test.Test, endpoint: string, keys = { access: 'rigd-test', secret: 'rigd-test-secret' }): Promise<Record<string, string>> {
  const dataDir = tmpDir();
  const m = await rigd(['migrate'], { env: { RIGD_DATA_DIR: dataDir } });
  t.equal(m.code, 0, `migrated ${m.stderr}`);
  return {
    RIGD_DATA_DIR: dataDir,
    RIGD_VPN_CIDR: '127.0.0.0/8',
    RIGD_STORAGE_DRIVER: 'minio',
    RIGD_STORAGE_MINIO_ENDPOINT: endpoint,
    RIGD_STORAGE_MINIO_ACCESS_KEY: keys.access,
    RIGD_STORAGE_MINIO_SECRET_KEY: keys.secret,
    RIGD_STORAGE_MINIO_TIMEOUT_MS: '60000',
  };
}

test('doctor: an https endpoint without a port is tried on 443', async (t) => {
  const env = await minioEnv(t, 'https://127.0.0.1');
  const res = await rigd(['doctor'], { env });
  const storage = line(res.stdout, 'storage');
  t.match(storage, /^(ok|fail)\s+storage\s+MinIO at https:\/\/127\.0\.0\.1:443 /, `storage line names port 443: ${storage}`);
  t.doesNotMatch(res.stdout, /:9000/, 'port 9000 is named nowhere');
});

test('doctor: an endpoint rigd cannot parse is a config line, not a stack trace', async (t) => {
  const dataDir = tmpDir();
  const env = {
    RIGD_DATA_DIR: dataDir,
    RIGD_STORAGE_DRIVER: 'minio',
    RIGD_STORAGE_MINIO_ENDPOINT: '[fe80::1%eth0]:9000',
    RIGD_STORAGE_MINIO_ACCESS_KEY: 'rigd-test',
    RIGD_STORAGE_MINIO_SECRET_KEY: 'rigd-test-secret',
  };
  const res = await rigd(['doctor'], { env });
  t.equal(res.code, 1, 'exit 1');
  t.match(line(res.stdout, 'config'), /^fail\s+config\s+config: storage\.minio\.endpoint: "\[fe80::1%eth0\]:9000" has an IPv6 zone/, `config line: ${line(res.stdout, 'config')}`);
  t.doesNotMatch(res.stdout + res.stderr, /TypeError|unexpected error|\n\s+at /, 'no stack trace');
  const serve = await rigd(['serve'], { env: { ...env, RIGD_SERVER_PORT: '0' } });
  t.equal(serve.code, 2, 'rigd serve exits 2 (a config error)');
  t.match(serve.stderr, /storage\.minio\.endpoint: "\[fe80::1%eth0\]:9000" has an IPv6 zone/, `serve says why: ${serve.stderr.split('\n')[0]}`);
  t.doesNotMatch(serve.stderr, /TypeError|\n\s+at /, 'no stack trace from serve');
});

test('doctor: an https endpoint URL for a MinIO that speaks plain HTTP: the fix is the URL, not use_ssl (refused next to a URL)', async (t) => {
  const peer = await startS3Peer();
  try {
    const env = await minioEnv(t, `https://127.0.0.1:${peer.port}`, { access: peer.accessKey, secret: peer.secretKey });
    const res = await rigd(['doctor'], { env });
    t.match(line(res.stdout, 'storage'), new RegExp(`^fail\\s+storage\\s+MinIO at https://127\\.0\\.0\\.1:${peer.port} does not answer TLS`), line(res.stdout, 'storage'));
    const fix = res.stdout.split('\n').find((l) => /^\s+fix: .*TLS|^\s+fix: .*http:\/\//.test(l)) ?? '';
    t.match(fix, new RegExp(`storage\\.minio\\.endpoint: http://127\\.0\\.0\\.1:${peer.port}`), `the fix names the http URL to write: ${fix}`);
    t.doesNotMatch(fix, /use_ssl: false/, 'and not use_ssl: false, which is refused next to an https URL');
    // Following the fix works: the same doctor with the URL the fix names gets past TLS.
    const fixed = await rigd(['doctor'], { env: { ...env, RIGD_STORAGE_MINIO_ENDPOINT: `http://127.0.0.1:${peer.port}` } });
    t.match(line(fixed.stdout, 'storage'), /^ok\s+storage\s+MinIO at http:\/\/127\.0\.0\.1:/, line(fixed.stdout, 'storage'));
  } finally {
    await peer.close();
  }
});
