// MinIO with a versioned bucket (a peer that keeps versions, as MinIO does: HEAD and GET take
// ?versionId=): an event is about the version it names. Delivered after the key was overwritten
// (MinIO replaying its queue after rigd was down, a slow delivery), it queues that version, read by
// its version id, not the newer one the key holds now (which has its own event).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import test from 'tape';
import { CaptureWorker } from '../../src/ingest/capture-worker.ts';
import { silentLogger } from '../../src/log.ts';
import { settled, tableShapes } from '../helpers/captures.ts';
import { makeCapture } from '../helpers/capture-files.ts';
import { http as request } from '../helpers/http.ts';
import { startServer } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { minioEvent, WEBHOOK_TOKEN } from '../helpers/webhook.ts';

interface Version {
  id: string;
  body: Buffer;
  etag: string;
}

/** A bucket "captures" whose keys keep every version; the last one PUT is current. */
async function versionedPeer(versions: Map<string, Version[]>) {
  const gets: string[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://peer');
    const key = decodeURIComponent(url.pathname.replace(/^\/captures\/?/, ''));
    if (key === '') return void res.writeHead(200).end();
    const all = versions.get(key) ?? [];
    const wanted = url.searchParams.get('versionId');
    const v = wanted ? all.find((x) => x.id === wanted) : all[all.length - 1];
    if (!v) return void res.writeHead(404).end();
    const headers = { 'content-length': String(v.body.length), etag: `"${v.etag}"`, 'last-modified': new Date().toUTCString(), 'x-amz-version-id': v.id };
    if (req.method === 'GET') gets.push(`${key}@${v.id}`);
    res.writeHead(200, headers).end(req.method === 'GET' ? v.body : undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, gets, close: () => (server.closeAllConnections(), server.close()) };
}

test('an event delivered after its key was overwritten queues the version it names, read by its version id', async (t) => {
  const files = tmpDir();
  const first = await makeCapture(path.join(files, 'v1.sqlite'));
  const second = await makeCapture(path.join(files, 'v2.sqlite'), { tables: [{ name: 'later', columns: [{ name: 'x', type: 'INTEGER' }], rows: 3 }] });
  const version = (id: string, file: string): Version => {
    const body = readFileSync(file);
    return { id, body, etag: createHash('md5').update(body).digest('hex') };
  };
  const v1 = version('v-1', first.path);
  const v2 = version('v-2', second.path);
  const key = 'rig8/cap.sqlite';
  const peer = await versionedPeer(new Map([[key, [v1, v2]]]));
  const s = await startServer({
    storage: { driver: 'minio', minio: { endpoint: '127.0.0.1', port: peer.port, access_key: 'k', secret_key: 'secret', timeout_ms: 3000 } },
    ingest: { webhook_token: WEBHOOK_TOKEN, max_attempts: 1 },
  });
  const w = new CaptureWorker(s.app.db, s.app.storage, s.app.config, silentLogger, { pollMs: 50 });
  try {
    // v1's event, as MinIO sends it (with its versionId), delivered after v2 was PUT.
    const event = minioEvent(key, v1.etag, v1.body.length);
    (event.Records[0]!.s3.object as Record<string, unknown>).versionId = v1.id;
    const res = await request(`${s.url}/api/v1/webhooks/capture_uploaded`, { json: event, headers: { authorization: `Bearer ${WEBHOOK_TOKEN}` } });
    t.equal(res.status, 200, `200 ${res.text.slice(0, 200)}`);
    const id = res.json().data.capture?.id;
    const row = await s.app.db.models.Capture.findByPk(id);
    t.deepEqual([row?.etag, row?.version_id], [v1.etag, v1.id], 'the capture is v1 (its etag and version id), not the current v2');
    await w.start();
    const done = await settled(s.app, id, 60_000);
    t.equal(done.state, 'ingested', `ingested (${done.last_error ?? ''})`);
    t.deepEqual(tableShapes(done.tables), first.tables, "with v1's tables");
    t.deepEqual(peer.gets, [`${key}@${v1.id}`], 'read by its version id');
  } finally {
    await w.stop();
    await s.close();
    peer.close();
  }
});
