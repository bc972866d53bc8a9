// rigd doctor with storage.minio.endpoint written as a URL without a port: the storage line names
// the scheme's port it tried (443 for https), not the port key's default 9000.
import test from 'tape';
import { rigd } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

const line = (out: string, check: string) => out.split('\n').find((l) => new RegExp(`^(ok|warn|fail)\\s+${check}\\s`).test(l)) ?? '';

test('doctor: an https endpoint without a port is tried on 443', async (t) => {
  const dataDir = tmpDir();
  const m = await rigd(['migrate'], { env: { RIGD_DATA_DIR: dataDir } });
  t.equal(m.code, 0, `migrated ${m.stderr}`);
  const env = {
    RIGD_DATA_DIR: dataDir,
    RIGD_VPN_CIDR: '127.0.0.0/8',
    RIGD_STORAGE_DRIVER: 'minio',
    RIGD_STORAGE_MINIO_ENDPOINT: 'https://127.0.0.1',
    RIGD_STORAGE_MINIO_ACCESS_KEY: 'rigd-test',
    RIGD_STORAGE_MINIO_SECRET_KEY: 'rigd-test-secret',
    RIGD_STORAGE_MINIO_TIMEOUT_MS: '60000',
  };
  const res = await rigd(['doctor'], { env });
  const storage = line(res.stdout, 'storage');
  t.match(storage, /^(ok|fail)\s+storage\s+MinIO at https:\/\/127\.0\.0\.1:443 /, `storage line names port 443: ${storage}`);
  t.doesNotMatch(res.stdout, /:9000/, 'port 9000 is named nowhere');
});
