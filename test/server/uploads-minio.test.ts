// test: alone (answered within 5 s)
// Uploads with the minio driver: rigs PUT straight to the S3 peer and the monitor notices the
// object. The rig endpoints stay behind the VPN rule; here vpn.cidr is 127.0.0.0/8 so loopback
// clients count as rigs (the network-namespace tests cover the rule itself).
import test from 'tape';
import { http } from '../helpers/http.ts';
import { startS3Peer } from '../helpers/s3-peer.ts';
import { startServer } from '../helpers/server.ts';
import { closedPort } from '../helpers/storage.ts';
import type { MinioStorage } from '../../src/storage/minio.ts';
import type { S3Error } from '../../src/storage/s3-error.ts';
import { verifyPresigned } from '../../src/storage/sigv4.ts';
import { minioEvent, WEBHOOK_TOKEN } from '../helpers/webhook.ts';

const LOOPBACK_VPN = { host: 'vpn.rigs.internal', cidr: '127.0.0.0/8' };

test('minio driver: reserve, PUT to MinIO, the monitor marks the upload uploaded', async (t) => {
  const peer = await startS3Peer();
  const s = await startServer({
    vpn: LOOPBACK_VPN,
    storage: {
      driver: 'minio',
      minio: { endpoint: peer.endpoint, port: peer.port, access_key: peer.accessKey, secret_key: peer.secretKey, public_endpoint: `localhost:${peer.port}`, timeout_ms: 3000 },
    },
  });
  try {
    const reserve = (size: number) => http(`${s.url}/api/v1/rigs/upload?key=rig3/cap.sqlite&size=${size}`, { headers: { host: '127.0.0.1' } });
    const res = await reserve(11);
    t.equal(res.status, 200, `reserve: 200 ${res.text.slice(0, 120)}`);
    const { url, id, exists } = res.json();
    t.equal(exists, false);
    t.ok(url.startsWith(`http://localhost:${peer.port}/captures/rig3/cap.sqlite?`), 'signed for the public endpoint, path-style');
    t.match(url, /X-Amz-Expires=900/);
    const put = await http(url, { method: 'PUT', body: 'hello rigs!' });
    t.equal(put.status, 200, 'PUT straight to storage');
    let state = '';
    // The monitor polls storage: 60 s at most, a busy machine may be slow.
    for (const until = Date.now() + 60_000; Date.now() < until && state !== 'uploaded'; ) {
      await new Promise((r) => setTimeout(r, 250));
      state = String((await s.app.db.models.Upload.findByPk(id))?.state);
    }
    t.equal(state, 'uploaded', 'the monitor saw the object (storage polling)');
    const row = await s.app.db.models.Upload.findByPk(id);
    t.equal(Number(row?.bytes_seen), 11, 'bytes seen');
    t.match(String(row?.etag), /^[0-9a-f]{32}$/, 'etag recorded');
    const again = (await reserve(11)).json();
    t.deepEqual([again.exists, again.size], [true, 11], 'reserve again: exists with its size');
  } finally {
    await s.close();
    await peer.close();
  }
});

test('minio driver: the signed PUT URL binds the reserved size (Content-Length is signed), so MinIO refuses any other length', async (t) => {
  const peer = await startS3Peer();
  const s = await startServer({
    vpn: LOOPBACK_VPN,
    storage: {
      driver: 'minio',
      minio: { endpoint: peer.endpoint, port: peer.port, access_key: peer.accessKey, secret_key: peer.secretKey, public_endpoint: `localhost:${peer.port}`, timeout_ms: 3000 },
    },
  });
  try {
    const res = await http(`${s.url}/api/v1/rigs/upload?key=rig4/cap.sqlite&size=11`, { headers: { host: '127.0.0.1' } });
    t.equal(res.status, 200, `reserve: 200 ${res.text.slice(0, 120)}`);
    const url = new URL(res.json().url);
    t.equal(url.searchParams.get('X-Amz-SignedHeaders'), 'content-length;host', 'Content-Length is among the signed headers');
    const storage = s.app.storage as MinioStorage;
    // s3rver checks no signature: check it as MinIO does, with the request's Content-Length.
    const check = (contentLength: string) => {
      try {
        verifyPresigned({ method: 'PUT', host: url.host, path: url.pathname, query: url.searchParams, credentials: storage.credentials, now: new Date(), headers: { 'content-length': contentLength } });
        return 'valid';
      } catch (err) {
        return (err as S3Error).s3Code;
      }
    };
    t.equal(check('11'), 'valid', 'a PUT of the reserved 11 bytes is signed');
    t.equal(check('12'), 'SignatureDoesNotMatch', 'a PUT of 12 bytes is refused');
    t.equal(check('1073741824'), 'SignatureDoesNotMatch', 'a PUT of 1 GiB is refused');
    const put = await http(url.href, { method: 'PUT', body: 'hello rigs!' });
    t.equal(put.status, 200, 'the rig PUTs its 11 bytes with the URL as given');
  } finally {
    await s.close();
    await peer.close();
  }
});

test('minio driver: a repeated event of the object a key held before its reservation does not complete that reservation', async (t) => {
  const peer = await startS3Peer();
  const s = await startServer({
    vpn: LOOPBACK_VPN,
    storage: {
      driver: 'minio',
      minio: { endpoint: peer.endpoint, port: peer.port, access_key: peer.accessKey, secret_key: peer.secretKey, public_endpoint: `localhost:${peer.port}`, timeout_ms: 3000 },
    },
    ingest: { webhook_token: WEBHOOK_TOKEN },
  });
  try {
    const key = 'rig5/cap.sqlite';
    const reserve = async () => (await http(`${s.url}/api/v1/rigs/upload?key=${key}&size=11`, { headers: { host: '127.0.0.1' } })).json();
    const event = () => http(`${s.url}/api/v1/webhooks/capture_uploaded`, { json: minioEvent(key, 'ignored', 11), headers: { authorization: `Bearer ${WEBHOOK_TOKEN}` } });
    const first = await reserve();
    t.equal((await http(first.url, { method: 'PUT', body: 'hello rigs!' })).status, 200, 'the first version PUT');
    t.equal((await event()).status, 200, 'its event');
    const stored = await s.app.db.models.Upload.findByPk(first.id);
    t.equal(stored?.state, 'uploaded', 'the first reservation completed');
    // Storage times are whole seconds: the next reservation is made over a second after that object was written.
    await new Promise((r) => setTimeout(r, 2100));
    const second = await reserve();
    t.deepEqual([second.exists, second.size], [true, 11], 'the key exists with the same size');
    t.equal((await event()).status, 200, 'MinIO delivers the first event again (a retry from its queue)');
    t.equal((await s.app.db.models.Upload.findByPk(second.id))?.state, 'reserved', 'the new reservation still waits for its own PUT');
    t.equal((await http(second.url, { method: 'PUT', body: 'HELLO RIGS!' })).status, 200, 'the second version PUT');
    t.equal((await event()).status, 200, 'its event');
    const done = await s.app.db.models.Upload.findByPk(second.id);
    t.equal(done?.state, 'uploaded', 'completed by its own object');
    t.notEqual(done?.etag, stored?.etag, 'with the etag of what the rig PUT through it');
  } finally {
    await s.close();
    await peer.close();
  }
});

test('storage down: 503 storage_unavailable quickly, with Retry-After, and the server keeps serving', async (t) => {
  const port = await closedPort();
  const s = await startServer({
    vpn: LOOPBACK_VPN,
    storage: { driver: 'minio', minio: { endpoint: '127.0.0.1', port, access_key: 'k', secret_key: 's', timeout_ms: 1000 } },
    ingest: { webhook_token: WEBHOOK_TOKEN },
  });
  try {
    const started = Date.now();
    const res = await http(`${s.url}/api/v1/rigs/upload?key=a.sqlite&size=1`, { headers: { host: '127.0.0.1' } });
    const ms = Date.now() - started;
    t.equal(res.status, 503);
    t.equal(res.json().error.code, 'storage_unavailable');
    // Loose: the refused connection is seen at once; a busy machine may still take seconds.
    t.ok(ms < 30_000, `answered in ${ms} ms, not after the OS's TCP timeouts`);
    t.equal(res.headers['retry-after'], '5', 'Retry-After: the rig asks again in 5 s');
    t.equal(await s.app.db.models.Upload.count(), 0, 'no reservation recorded');
    const event = await http(`${s.url}/api/v1/webhooks/capture_uploaded`, { json: minioEvent('rig3/cap.sqlite', 'abc', 11), headers: { authorization: `Bearer ${WEBHOOK_TOKEN}` } });
    t.deepEqual([event.status, event.json().error?.code, event.headers['retry-after']], [503, 'storage_unavailable', '5'], 'a MinIO event meanwhile: 503 with Retry-After (MinIO sends it again)');
    t.equal(await s.app.db.models.Capture.count(), 0, 'nothing queued');
    const other = await http(`${s.url}/api/v1/sessions`, { json: { login: 'x', password: 'y' } });
    t.equal(other.status, 401, 'other endpoints still answer');
  } finally {
    await s.close();
  }
});
