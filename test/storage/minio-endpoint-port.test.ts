// An endpoint URL without a port, over a real socket: rigd reaches the S3 peer on the scheme's port
// (80 for http://), creates the bucket there, and the signed PUT URL it hands out works.
// The peer listens on port 80 of a loopback address of its own (127.53.0.1), so no other test's
// listener is in the way.
import test from 'tape';
import { createStorage, MinioStorage } from '../../src/storage/index.ts';
import { startS3Peer } from '../helpers/s3-peer.ts';
import { testConfig } from '../helpers/storage.ts';

test('minio: endpoint http://host (no port) connects to port 80, and its signed PUT URL works', async (t) => {
  const peer = await startS3Peer({ address: '127.53.0.1', port: 80 });
  try {
    const config = testConfig({
      storage: { driver: 'minio', bucket: 'port-eighty', minio: { endpoint: 'http://127.53.0.1', access_key: peer.accessKey, secret_key: peer.secretKey, timeout_ms: 60_000 } },
    });
    const storage = createStorage(config);
    if (!(storage instanceof MinioStorage)) throw new Error('expected the minio driver');
    t.equal(storage.internal.port, 80, 'resolved to port 80');
    await storage.ensureBucket();
    t.equal(await storage.bucketExists(), true, 'the bucket was created on the peer at port 80');
    const body = Buffer.from('capture bytes');
    const url = await storage.presignPut('rig-1/a.db', 300, { size: body.length });
    t.ok(url.startsWith('http://127.53.0.1/port-eighty/rig-1/a.db?'), `signed URL names no port: ${url.slice(0, 60)}...`);
    const res = await fetch(url, { method: 'PUT', body });
    t.equal(res.status, 200, 'the PUT to the signed URL is taken');
    const st = await storage.stat('rig-1/a.db');
    t.equal(st?.size, body.length, 'the object is in storage');
  } finally {
    await peer.close();
  }
});
