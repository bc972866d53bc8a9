// Duplicate webhooks for one object version reaching several rigd nodes at once (two servers on one
// database, one process): one capture, one job, every answer 200 queued true with the same capture.
// The insert is ON CONFLICT DO NOTHING and the row is read locked, so no unique violation and no
// second job, whether the version is new or already recorded without a job.
import path from 'node:path';
import test from 'tape';
import { normaliseEtag } from '../../src/services/captures/notice.ts';
import { makeCapture } from '../helpers/capture-files.ts';
import { putFile, settled } from '../helpers/captures.ts';
import { databaseUrlFor } from '../helpers/dialect.ts';
import { http } from '../helpers/http.ts';
import { startServer, userWithToken, type TestServer } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { minioEvent, WEBHOOK_TOKEN } from '../helpers/webhook.ts';

const files = tmpDir();

/** Two servers on one data_dir and one database (the embedded store is that data_dir's, so both see the objects). */
async function twoNodes(): Promise<[TestServer, TestServer]> {
  const dir = tmpDir();
  const config = { data_dir: dir, database: { url: databaseUrlFor(dir) }, ingest: { webhook_token: WEBHOOK_TOKEN } };
  return Promise.all([startServer(config), startServer(config)]) as Promise<[TestServer, TestServer]>;
}

/** 40 duplicate notices of key at once, alternating nodes and body forms. */
async function storm(nodes: TestServer[], key: string, token: string) {
  const url = nodes[0]!.app.storage.objectUrl(key);
  const hook = (s: TestServer, body: unknown, authorization: string) =>
    http(`${s.url}/api/v1/webhooks/capture_uploaded`, { json: body, headers: { accept: 'application/json', authorization } });
  return Promise.all(
    Array.from({ length: 40 }, (_, i) => {
      const node = nodes[i % 2]!;
      return i % 4 < 2 ? hook(node, { url }, token) : hook(node, minioEvent(key, 'any', 1), `Bearer ${WEBHOOK_TOKEN}`);
    }),
  );
}

test('40 duplicate webhooks at once split over two nodes: one capture, one job, 40 x 200 queued true, one capture id', async (t) => {
  const nodes = await twoNodes();
  const [one, two] = nodes;
  try {
    const ana = await userWithToken(one, 'ana');
    const made = await makeCapture(path.join(files, 'a.sqlite'));
    const key = 'dup/nodes.sqlite';
    await putFile(one.app, key, made.path);
    const jobsBefore = await one.app.db.models.Job.count();
    const results = await storm(nodes, key, ana.token);
    t.deepEqual(results.map((r) => r.status), results.map(() => 200), '40 x 200, 0 errors');
    t.ok(results.every((r) => r.json().data.queued === true), 'every answer says queued');
    const ids = new Set(results.map((r) => r.json().data.capture?.id));
    t.equal(ids.size, 1, 'every answer names the same capture');
    t.equal(await two.app.db.models.Capture.count({ where: { key } }), 1, 'one capture');
    t.equal((await two.app.db.models.Job.count()) - jobsBefore, 1, 'one job');
    t.equal((await settled(one.app, [...ids][0]!)).state, 'ingested', 'and it is ingested once');
  } finally {
    await Promise.all(nodes.map((s) => s.close()));
  }
});

test('a version recorded without a job (uploaded, not queued): duplicate webhooks on two nodes enqueue it once', async (t) => {
  const nodes = await twoNodes();
  const [one, two] = nodes;
  try {
    const ana = await userWithToken(two, 'ana');
    const made = await makeCapture(path.join(files, 'b.sqlite'));
    const key = 'dup/recorded.sqlite';
    const info = await putFile(one.app, key, made.path);
    const recorded = await one.app.db.models.Capture.create({
      bucket: one.app.storage.bucket, key, etag: normaliseEtag(info.etag), size: info.size, rig_id: null, project: null, upload_id: null,
    });
    t.equal((await one.app.captures.get(recorded.id)).state, 'uploaded', 'recorded, no job yet');
    const jobsBefore = await one.app.db.models.Job.count();
    const results = await storm(nodes, key, ana.token);
    t.deepEqual(results.map((r) => r.status), results.map(() => 200), '40 x 200, 0 errors');
    t.deepEqual([...new Set(results.map((r) => r.json().data.capture?.id))], [recorded.id], 'every answer names the recorded capture');
    t.ok(results.every((r) => r.json().data.queued === true), 'every answer says queued');
    t.equal((await one.app.db.models.Job.count()) - jobsBefore, 1, 'one job');
    t.equal(await one.app.db.models.Capture.count({ where: { key } }), 1, 'still one capture');
    await settled(one.app, recorded.id);
  } finally {
    await Promise.all(nodes.map((s) => s.close()));
  }
});
