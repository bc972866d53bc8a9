// The storage contract suite against the minio driver: with s3rver (started here), and with a real MinIO
// when RIGD_TEST_MINIO_ENDPOINT/_PORT/_ACCESS_KEY/_SECRET_KEY are set. s3rver accepts any signature, so
// the suite recomputes every URL's signature itself; a real MinIO checks them on upload too. Without
// those variables the real-MinIO suite is not registered (no placeholder test that cannot fail).
// When s3rver cannot start, the suite fails, naming the reason (helpers/s3-peer.ts, storage-contract.ts).
import { randomBytes } from 'node:crypto';
import { Client } from 'minio';
import { MinioStorage } from '../../src/storage/minio.ts';
import { startS3Peer } from '../helpers/s3-peer.ts';
import { runContractSuite, type DriverUnderTest } from '../helpers/storage-contract.ts';
import { testConfig } from '../helpers/storage.ts';

async function httpUpload(url: string, body: Buffer): Promise<void> {
  const res = await fetch(url, { method: 'PUT', body });
  if (res.status !== 200) throw new Error(`PUT ${res.status}: ${await res.text()}`);
}

async function httpDownload(url: string): Promise<Buffer> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${res.status}: ${await res.text()}`);
  return Buffer.from(await res.arrayBuffer());
}

runContractSuite('minio driver on s3rver', async (): Promise<DriverUnderTest> => {
  const peer = await startS3Peer();
  // Rigs reach storage as "localhost", rigd talks to 127.0.0.1: URLs must carry (and sign) the public host.
  // s3rver answers in this process: a generous timeout (the suite proves no timing).
  const storage = new MinioStorage(
    testConfig({
      storage: {
        driver: 'minio',
        minio: { endpoint: peer.endpoint, port: peer.port, access_key: peer.accessKey, secret_key: peer.secretKey, public_endpoint: `localhost:${peer.port}`, timeout_ms: 60_000 },
      },
    }),
  );
  return {
    storage,
    credentials: storage.credentials,
    parentAndChild: true,
    etagAlgorithm: 'md5',
    longSegments: false, // s3rver keeps each key segment as a file name
    upload: httpUpload,
    download: httpDownload,
    close: () => peer.close(),
  };
});

const env = process.env;
if (env.RIGD_TEST_MINIO_ENDPOINT && env.RIGD_TEST_MINIO_PORT && env.RIGD_TEST_MINIO_ACCESS_KEY && env.RIGD_TEST_MINIO_SECRET_KEY) {
  const bucket = `rigd-test-${randomBytes(4).toString('hex')}`;
  const minio = {
    endpoint: env.RIGD_TEST_MINIO_ENDPOINT,
    port: Number(env.RIGD_TEST_MINIO_PORT),
    access_key: env.RIGD_TEST_MINIO_ACCESS_KEY,
    secret_key: env.RIGD_TEST_MINIO_SECRET_KEY,
    use_ssl: env.RIGD_TEST_MINIO_USE_SSL === 'true',
  };
  runContractSuite('minio driver on a real MinIO', async () => {
    const storage = new MinioStorage(testConfig({ storage: { driver: 'minio', bucket, minio } }));
    return {
      storage,
      credentials: storage.credentials,
      parentAndChild: false,
      etagAlgorithm: 'md5',
      longSegments: true,
      upload: httpUpload,
      download: httpDownload,
      async close() {
        // Remove what the suite stored, then the bucket.
        const c = new Client({ endPoint: minio.endpoint, port: minio.port, useSSL: minio.use_ssl, accessKey: minio.access_key, secretKey: minio.secret_key });
        const names: string[] = [];
        for await (const o of c.listObjectsV2(bucket, '', true)) if (o.name) names.push(o.name);
        if (names.length) await c.removeObjects(bucket, names);
        await c.removeBucket(bucket);
      },
    };
  });
}
