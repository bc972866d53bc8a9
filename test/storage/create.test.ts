// createStorage picks the driver from storage.driver, and constructing one touches neither disk nor network.
import { existsSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { createStorage, EmbeddedStorage, MinioStorage } from '../../src/storage/index.ts';
import { tempDir, testConfig } from '../helpers/storage.ts';

test('createStorage: embedded by default, minio when configured', (t) => {
  const tmp = tempDir();
  try {
    const dataDir = path.join(tmp.dir, 'data');
    const e = createStorage(testConfig({ data_dir: dataDir }));
    t.ok(e instanceof EmbeddedStorage && e.driver === 'embedded', 'default driver: embedded');
    t.equal(e.bucket, 'captures', 'bucket from config');
    t.notOk(existsSync(dataDir), 'nothing written by construction');
    const m = createStorage(testConfig({ storage: { driver: 'minio', bucket: 'rig-files', minio: { access_key: 'k', secret_key: 's' } } }));
    t.ok(m instanceof MinioStorage && m.driver === 'minio', 'driver: minio');
    t.equal(m.bucket, 'rig-files', 'bucket from config');
    t.ok(m.objectUrl('a.db').startsWith('http://127.0.0.1:9000/rig-files/'), 'public endpoint falls back to endpoint:port');
    const pub = createStorage(testConfig({ storage: { driver: 'minio', minio: { access_key: 'k', secret_key: 's', use_ssl: true, public_endpoint: 'files.example.org' } } }));
    t.equal(pub.objectUrl('a.db'), 'https://files.example.org/captures/a.db', 'public_endpoint without port: the scheme default');
  } finally {
    tmp.cleanup();
  }
  t.end();
});
