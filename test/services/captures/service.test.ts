// Uploads hand over to captures in one direction: a completed upload of a .sqlite/.db key makes the
// capture of that object version, linked to the uploading rig and its project (the upload's, else
// the rig's current one), queued at once with auto_enqueue, left `uploaded` without it (a webhook
// then queues it); other keys make none. A MinIO event completes a waiting reservation and names the
// same capture. Two processes inserting one version at once end on one row.
import { createReadStream, statSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { openApp, type App } from '../../../src/services/app.ts';
import { settled, tableShapes } from '../../helpers/captures.ts';
import { makeCapture } from '../../helpers/capture-files.ts';
import { startServer } from '../../helpers/server.ts';
import { tmpDir } from '../../helpers/tmp.ts';

const files = tmpDir();
const PEER = '10.144.9.9';

async function report(app: App, id: string): Promise<void> {
  await app.rigs.report(id, { rig_serial: `S-${id}`, local_ip: '192.168.1.9', software_version: '1', git_branch: 'main', gpsd_latitude: '1', gpsd_longitude: '2' }, PEER);
}

async function upload(app: App, key: string, file: string, project?: string): Promise<number> {
  const size = statSync(file).size;
  const r = await app.uploads.reserve({ key, size: String(size), ...(project ? { project } : {}) }, PEER);
  await app.uploads.receive(key, createReadStream(file));
  return r.id;
}

test('auto-enqueue: an uploaded capture is queued and ingested, with its rig and project', async (t) => {
  const s = await startServer();
  try {
    await report(s.app, 'rig5');
    const file = path.join(files, 'auto.sqlite');
    const made = await makeCapture(file, { tables: [{ name: 'r', columns: [{ name: 'v', type: 'REAL' }], rows: 3000 }] });
    const uploadId = await upload(s.app, 'rig5/auto.sqlite', file, 'North-Sea');
    const [c] = (await s.app.captures.list()).captures;
    t.ok(c, 'queued by the upload itself (no webhook)');
    t.deepEqual([c.key, c.rig_id, c.project, c.upload_id], ['rig5/auto.sqlite', 'rig5', 'north-sea', uploadId], 'rig, project and upload of the capture');
    const done = await settled(s.app, c.id);
    t.deepEqual([done.state, tableShapes(done.tables)], ['ingested', made.tables], 'ingested');

    // The next upload names no project: the rig's current one (set by the first) is inherited.
    const second = path.join(files, 'auto2.db');
    await makeCapture(second, { tables: [{ name: 'r', columns: [{ name: 'v', type: 'REAL' }], rows: 10 }] });
    await upload(s.app, 'rig5/auto2.db', second);
    const c2 = (await s.app.captures.list()).captures.find((x) => x.key === 'rig5/auto2.db');
    t.deepEqual([c2?.rig_id, c2?.project], ['rig5', 'north-sea'], '.db key queued too; the rig\'s current project');

    const log = path.join(files, 'rig.log');
    (await import('node:fs')).writeFileSync(log, 'boot ok\n');
    await upload(s.app, 'rig5/rig.log', log);
    t.notOk((await s.app.captures.list()).captures.some((x) => x.key === 'rig5/rig.log'), 'a log upload is not a capture');
    const webhookToo = await s.app.captures.queueTarget('rig5/auto.sqlite');
    t.deepEqual([webhookToo.created, webhookToo.enqueued, webhookToo.capture.id], [false, false, c.id], 'a later queue request for the same version finds the same capture');
    const jobs = await s.app.db.models.Job.count();
    const hook = await s.app.captureNotices.notify({ url: s.app.storage.objectUrl('rig5/auto2.db') }, 'user');
    t.deepEqual([hook.queued, hook.capture?.id], [true, c2?.id], 'a webhook for a capture queued at upload: queued true, that capture');
    t.equal(await s.app.db.models.Job.count(), jobs, 'no second job');
  } finally {
    await s.close();
  }
});

test('auto_enqueue off: an upload makes its capture, uploaded and not queued; a webhook queues it', async (t) => {
  const s = await startServer({ ingest: { auto_enqueue: false } });
  try {
    await report(s.app, 'rig6');
    const file = path.join(files, 'off.sqlite');
    await makeCapture(file, { tables: [{ name: 'r', columns: [{ name: 'v', type: 'REAL' }], rows: 10 }] });
    await upload(s.app, 'rig6/off.sqlite', file);
    const u = await s.app.db.models.Upload.findOne({ where: { key: 'rig6/off.sqlite' } });
    t.equal(u?.state, 'uploaded', 'the upload completed');
    const [c] = (await s.app.captures.list()).captures;
    t.deepEqual([c?.key, c?.state, c?.job_id, c?.rig_id, c?.upload_id], ['rig6/off.sqlite', 'uploaded', null, 'rig6', u?.id], 'its capture exists, uploaded, with no job');
    t.equal(await s.app.db.models.Job.count(), 0, 'no job');
    t.deepEqual((await s.app.captures.list({ state: 'uploaded' })).captures.map((x) => x.id), [c?.id], 'listed as uploaded');
    t.equal((await s.app.captures.list({ state: 'queued' })).captures.length, 0, 'not as queued');
    const res = await s.app.captureNotices.notify({ url: s.app.storage.objectUrl('rig6/off.sqlite') }, 'user');
    t.deepEqual([res.queued, res.capture?.id, res.capture?.state], [true, c?.id, 'queued'], 'a webhook queues the uploaded capture');
    t.equal(await s.app.db.models.Job.count(), 1, 'one job');
    const done = await settled(s.app, c!.id);
    t.equal(done.state, 'ingested', 'and it is ingested');
  } finally {
    await s.close();
  }
});

test('a storage event completes the waiting reservation and queues the capture once', async (t) => {
  const s = await startServer({ ingest: { auto_enqueue: true } });
  try {
    await report(s.app, 'rig8');
    const file = path.join(files, 'ev.sqlite');
    await makeCapture(file, { tables: [{ name: 'r', columns: [{ name: 'v', type: 'REAL' }], rows: 10 }] });
    const size = statSync(file).size;
    const r = await s.app.uploads.reserve({ key: 'rig8/ev.sqlite', size: String(size), project: 'p1' }, PEER);
    // The bytes land in storage without rigd's PUT route (as with MinIO); then MinIO's event arrives.
    if (s.app.storage.driver !== 'embedded') throw new Error('embedded store expected');
    const info = await s.app.storage.putObject('rig8/ev.sqlite', createReadStream(file), { expectedSize: size });
    const res = await s.app.captureNotices.notify({
      Records: [{ eventName: 's3:ObjectCreated:Put', s3: { bucket: { name: 'captures' }, object: { key: 'rig8/ev.sqlite', size, eTag: info.etag } } }],
    }, 'webhook');
    t.equal(res.queued, true, 'queued');
    t.deepEqual(res.capture, { id: res.objects?.[0]?.capture?.id, state: res.objects?.[0]?.capture?.state }, 'the capture named');
    const u = await s.app.db.models.Upload.findByPk(r.id);
    t.deepEqual([u?.state, u?.etag], ['uploaded', info.etag], 'the reservation is completed by the event');
    const list = (await s.app.captures.list()).captures;
    t.equal(list.length, 1, 'one capture (the upload hand-over and the event name the same version)');
    t.equal(await s.app.db.models.Job.count(), 1, 'one job');
    t.deepEqual([list[0].rig_id, list[0].project, list[0].upload_id], ['rig8', 'p1', r.id], 'linked to the upload');
  } finally {
    await s.close();
  }
});

test('two processes inserting the same version at once: one capture, each finds it', async (t) => {
  const s = await startServer();
  const other = await openApp(s.config);
  try {
    const file = path.join(files, 'race.sqlite');
    await makeCapture(file, { tables: [{ name: 'r', columns: [{ name: 'v', type: 'REAL' }], rows: 10 }] });
    if (s.app.storage.driver !== 'embedded') throw new Error('embedded store expected');
    const info = await s.app.storage.putObject('race/one.sqlite', createReadStream(file), { expectedSize: statSync(file).size });
    const object = { key: 'race/one.sqlite', etag: info.etag, size: info.size, url: '' };
    const settledAll = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => (i % 2 ? other : s.app).captures.queueObject(object)));
    t.deepEqual(settledAll.map((r) => r.status), settledAll.map(() => 'fulfilled'), '20 x answered, no error');
    const ids = new Set(settledAll.map((r) => (r.status === 'fulfilled' ? r.value.capture.id : 0)));
    t.equal(ids.size, 1, 'all name one capture');
    const created = settledAll.filter((r) => r.status === 'fulfilled' && r.value.created).length;
    t.equal(created, 1, 'one call made it');
    t.equal(await s.app.db.models.Capture.count({ where: { key: 'race/one.sqlite' } }), 1, 'one row');
    t.equal(await s.app.db.models.Job.count(), 1, 'one job');
  } finally {
    await other.close();
    await s.close();
  }
});
