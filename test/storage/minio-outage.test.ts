// test: alone (answers within 5 s)
// The minio driver when storage is down: a closed port or a peer that never answers gives Unavailable
// ('storage_unavailable') within the configured timeout, never a hang. Presigning needs no network.
import http from 'node:http';
import test from 'tape';
import { MinioStorage } from '../../src/storage/minio.ts';
import { verifyPresigned } from '../../src/storage/sigv4.ts';
import { startS3Peer } from '../helpers/s3-peer.ts';
import { caught } from '../helpers/storage-contract.ts';
import { closedPort, hungPeer, testConfig } from '../helpers/storage.ts';

function driver(port: number): MinioStorage {
  return new MinioStorage(
    testConfig({ storage: { driver: 'minio', minio: { endpoint: '127.0.0.1', port, access_key: 'k', secret_key: 'secret', timeout_ms: 500, public_endpoint: 'vpn.rigs.internal:9000' } } }),
  );
}

/**
 * "Quickly" means seconds, not the OS's minutes-long TCP timeouts nor a hang: the bound is loose (a
 * busy machine may be slow; the timeout is 500 ms), and a call still pending at it fails the test
 * instead of holding the file up.
 */
const SECONDS_MS = 30_000;

/** fn's rejection, or a 'still pending' error of kind 'hang' once SECONDS_MS have passed. */
type Caught = Awaited<ReturnType<typeof caught>>;
async function within(fn: () => Promise<unknown>): Promise<Caught> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<Caught>((resolve) => {
    timer = setTimeout(() => resolve(Object.assign(new Error(`still pending after ${SECONDS_MS} ms`), { kind: 'hang', code: 'hang' })), SECONDS_MS);
  });
  try {
    return await Promise.race([caught(fn), hang]);
  } finally {
    clearTimeout(timer);
  }
}

async function expectUnavailable(t: test.Test, what: string, fn: () => Promise<unknown>): Promise<void> {
  const started = Date.now();
  const err = await within(fn);
  const ms = Date.now() - started;
  t.deepEqual([err?.kind, err?.code], ['unavailable', 'storage_unavailable'], `${what}: Unavailable (${ms} ms)`);
  t.ok(ms < SECONDS_MS, `${what}: answered within seconds`);
}

test('closed port: every storage call rejects with Unavailable', async (t) => {
  const s = driver(await closedPort());
  await expectUnavailable(t, 'ping', () => s.ping());
  await expectUnavailable(t, 'ensureBucket', () => s.ensureBucket());
  await expectUnavailable(t, 'stat', () => s.stat('a/b.db'));
  await expectUnavailable(t, 'read', () => s.read('a/b.db'));
  // The upload endpoint presigns (offline) and checks the key (online): the check is what fails.
  const url = await s.presignPut('a/b.db', 900);
  const u = new URL(url);
  t.doesNotThrow(
    () => verifyPresigned({ method: 'PUT', host: u.host, path: u.pathname, query: u.searchParams, credentials: s.credentials, now: new Date() }),
    'presigning works without storage (no network call) and signs the public host',
  );
  await expectUnavailable(t, 'presign then stat', async () => {
    await s.presignPut('a/b.db', 900);
    return s.stat('a/b.db');
  });
});

test('hung peer (accepts, never answers): every storage call rejects with Unavailable after the timeout', async (t) => {
  const peer = await hungPeer();
  try {
    const s = driver(peer.port);
    await expectUnavailable(t, 'ping', () => s.ping());
    await expectUnavailable(t, 'ensureBucket', () => s.ensureBucket());
    await expectUnavailable(t, 'stat', () => s.stat('a/b.db'));
    await expectUnavailable(t, 'read', () => s.read('a/b.db'));
    const err = await caught(() => s.ping());
    t.match(err?.message ?? '', /500 ms|ETIMEDOUT/, `the message says why: ${err?.message}`);
  } finally {
    await peer.close();
  }
});

test('a peer that stalls in the middle of a body: the read stream errors after the timeout', async (t) => {
  const server = http.createServer((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-length': '100000', etag: '"0123"', 'last-modified': new Date().toUTCString() });
      res.write(Buffer.alloc(1000)); // then nothing more
    } else {
      res.writeHead(200).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const s = driver((server.address() as { port: number }).port);
    const stream = await s.read('a/b.db');
    const started = Date.now();
    let got = 0;
    const err = await within(async () => {
      for await (const chunk of stream) got += (chunk as Buffer).length;
    });
    t.ok(err && err.kind !== 'hang', `the stream fails (${err?.message}) after ${got} bytes, ${Date.now() - started} ms`);
    t.ok(Date.now() - started < SECONDS_MS, 'within seconds');
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('a slow reader is not an outage: pausing longer than the timeout keeps the stream', async (t) => {
  const peer = await startS3Peer();
  // A timeout a live peer meets on a loaded machine (the calls before the read must succeed), and a
  // pause four times as long.
  const timeoutMs = 3000;
  try {
    const s = new MinioStorage(
      testConfig({ storage: { driver: 'minio', minio: { endpoint: peer.endpoint, port: peer.port, access_key: peer.accessKey, secret_key: peer.secretKey, timeout_ms: timeoutMs } } }),
    );
    await s.ensureBucket();
    const body = Buffer.alloc(4 * 1024 * 1024, 0x5a);
    const res = await fetch(await s.presignPut('slow.db', 60), { method: 'PUT', body });
    t.equal(res.status, 200, 'object stored');
    const stream = await s.read('slow.db');
    let got = 0;
    const err = await caught(async () => {
      let paused = false;
      for await (const chunk of stream) {
        got += (chunk as Buffer).length;
        if (!paused) {
          paused = true;
          await new Promise((r) => setTimeout(r, 4 * timeoutMs));
        }
      }
    });
    t.equal(err, null, 'no error');
    t.equal(got, body.length, 'every byte arrives');
  } finally {
    await peer.close();
  }
});

test('missing credentials are a configuration error, not a hang later', (t) => {
  t.throws(
    () => new MinioStorage(testConfig({ storage: { driver: 'minio', minio: { access_key: '', secret_key: '' } } })),
    /access_key and storage\.minio\.secret_key are required/,
    'constructor refuses',
  );
  t.end();
});
