// A storage peer that answers a stat but stalls in the middle of every download (MinIO overloaded,
// a disk hanging, a link dropping), with the minio driver: each run ends after storage.minio.timeout_ms
// of silence (3 s: a stat on a busy machine must not look like a stall); that is storage not
// answering, not the capture's fault, so with ingest.max_attempts 1 the capture stays queued, and
// it is ingested once the peer sends whole bodies again. Nothing here depends on this machine's
// speed: a stall is detected by the driver's idle timeout, and the test waits for the peer to have
// seen the stalled downloads, with generous bounds.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import test from 'tape';
import { CaptureWorker } from '../../src/ingest/capture-worker.ts';
import { silentLogger } from '../../src/log.ts';
import { openApp } from '../../src/services/app.ts';
import { settled, tableShapes } from '../helpers/captures.ts';
import { makeCapture } from '../helpers/capture-files.ts';
import { waitFor } from '../helpers/jobs.ts';
import { testConfig } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('downloads that stall mid-body use up no attempt; the capture is ingested once storage sends whole bodies', async (t) => {
  const made = await makeCapture(path.join(tmpDir(), 'stall.sqlite'));
  const body = readFileSync(made.path);
  const headers = { 'content-length': String(body.length), etag: '"0123456789abcdef0123456789abcdef"', 'last-modified': new Date().toUTCString(), 'content-type': 'application/octet-stream' };
  let stalling = true;
  let stalled = 0;
  const peer = http.createServer((req, res) => {
    if (req.method === 'HEAD') return void res.writeHead(200, headers).end();
    if (req.method !== 'GET') return void res.writeHead(200).end();
    res.writeHead(200, headers);
    if (!stalling) return void res.end(body);
    stalled++;
    res.write(body.subarray(0, 1024)); // then nothing more
  });
  await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
  const port = (peer.address() as { port: number }).port;
  const app = await openApp(
    testConfig({
      storage: { driver: 'minio', minio: { endpoint: '127.0.0.1', port, access_key: 'k', secret_key: 'secret', timeout_ms: 3000 } },
      ingest: { max_attempts: 1 },
    }),
  );
  const w = new CaptureWorker(app.db, app.storage, app.config, silentLogger, { pollMs: 50, backoff: { baseMs: 200, jitter: 0 } });
  try {
    const q = await app.captures.queueTarget('rig6/stall.sqlite');
    t.equal(q.capture.state, 'queued', 'queued (storage answered the stat)');
    await w.start();
    const during = await waitFor(async () => {
      const c = await app.captures.get(q.capture.id);
      return (stalled >= 3 && c.state === 'queued') || c.state === 'failed' ? c : null;
    }, 60_000, 'three stalled downloads');
    t.deepEqual([during.state, during.error_code], ['queued', 'storage_error'], `still queued after ${stalled} stalled downloads (max_attempts 1): ${during.last_error}`);
    stalling = false;
    const done = await settled(app, q.capture.id, 60_000);
    t.equal(done.state, 'ingested', `ingested once whole bodies come (${done.last_error ?? ''})`);
    t.deepEqual(tableShapes(done.tables), made.tables, 'with its tables');
  } finally {
    await w.stop();
    await app.close();
    peer.closeAllConnections();
    peer.close();
  }
});

test('a version gone between its stat and its download (NoSuchVersion: a lifecycle rule expired it) fails object_missing at once, not retried', async (t) => {
  const headers = { 'content-length': '4096', etag: '"0123456789abcdef0123456789abcdef"', 'last-modified': new Date().toUTCString(), 'x-amz-version-id': 'v-1' };
  let gets = 0;
  const peer = http.createServer((req, res) => {
    if (req.method === 'HEAD') return void res.writeHead(200, headers).end();
    gets++;
    const xml = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchVersion</Code><Message>The specified version does not exist.</Message><Key>rig6/gone.sqlite</Key><VersionId>v-1</VersionId></Error>';
    res.writeHead(404, { 'content-type': 'application/xml', 'content-length': String(Buffer.byteLength(xml)) }).end(xml);
  });
  await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
  const port = (peer.address() as { port: number }).port;
  const app = await openApp(
    testConfig({
      storage: { driver: 'minio', minio: { endpoint: '127.0.0.1', port, access_key: 'k', secret_key: 'secret', timeout_ms: 3000 } },
      ingest: { max_attempts: 1 },
    }),
  );
  const w = new CaptureWorker(app.db, app.storage, app.config, silentLogger, { pollMs: 50, backoff: { baseMs: 200, jitter: 0 } });
  try {
    const q = await app.captures.queueTarget('rig6/gone.sqlite');
    t.equal(q.capture.state, 'queued', 'queued (its version held by id)');
    await w.start();
    const done = await waitFor(async () => {
      const c = await app.captures.get(q.capture.id);
      return c.state === 'failed' || gets >= 3 ? c : null;
    }, 60_000, 'the capture to fail');
    t.deepEqual([done.state, done.error_code], ['failed', 'object_missing'], `failed object_missing: ${done.last_error}`);
  } finally {
    await w.stop();
    await app.close();
    peer.closeAllConnections();
    peer.close();
  }
});
