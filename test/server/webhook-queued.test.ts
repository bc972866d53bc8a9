// The webhook's `queued` under load and on every outcome: 50 webhooks at once all ingested; a failed
// capture and a file that is no capture answer queued false with the reason; 40 duplicate notices at
// once make one capture; GET /api/v1/captures and /:id.
import path from 'node:path';
import test from 'tape';
import { fixture } from '../helpers/fixture.ts';
import { putFile, settled } from '../helpers/captures.ts';
import { makeCapture, type MadeCapture } from '../helpers/capture-files.ts';
import { http } from '../helpers/http.ts';
import { closeServer } from '../helpers/closed.ts';
import type { TestServer } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { minioEvent, WEBHOOK_TOKEN, webhookWorld, type WebhookWorld } from '../helpers/webhook.ts';

const files = tmpDir();
let s: TestServer;
let ana: { id: string; token: string };
let made: MadeCapture;
let hook: WebhookWorld['hook'];

const setup = fixture(async () => {
  ({ s, ana, made, hook } = await webhookWorld(files));
});

test('50 webhooks at once: 50 x 200, 50 captures, 50 jobs, all ingested', async (t) => {
  await setup();
  const small = await makeCapture(path.join(files, 'small.sqlite'), { tables: [{ name: 't', columns: [{ name: 'a', type: 'INTEGER' }], rows: 100 }] });
  const keys = Array.from({ length: 50 }, (_, i) => `burst/${i}.sqlite`);
  // Distinct keys: distinct captures (the same bytes under another key are another object).
  for (const key of keys) await putFile(s.app, key, small.path);
  const jobsBefore = await s.app.db.models.Job.count();
  const results = await Promise.all(keys.map((key) => hook({ url: s.app.storage.objectUrl(key) }, { authorization: ana.token })));
  const statuses = results.map((r) => r.status);
  t.deepEqual(statuses, keys.map(() => 200), '50 x 200 (no 500, no SQLITE_BUSY)');
  t.ok(results.every((r) => r.json().data.queued === true), 'each queued');
  t.equal((await s.app.db.models.Job.count()) - jobsBefore, 50, '50 jobs');
  const ids = (await s.app.captures.list({ limit: 500 })).captures.filter((c) => c.key.startsWith('burst/')).map((c) => c.id);
  t.equal(ids.length, 50, '50 captures');
  // One after another: 50 pollers at once (each reading its capture every 50 ms) slowed the very
  // ingestion they waited for, on the same event loop and database, past their deadline.
  const done = [];
  for (const id of ids) done.push(await settled(s.app, id, 120_000));
  t.ok(done.every((c) => c.state === 'ingested'), 'all 50 ingested');
});

test('a failed capture: queued false with reason capture_failed and the capture; a file that is no capture: not_a_capture_file', async (t) => {
  const key = 'rig4/broken.sqlite';
  const junk = path.join(files, 'junk.sqlite');
  (await import('node:fs')).writeFileSync(junk, 'this is not a database at all\n'.repeat(200));
  await putFile(s.app, key, junk);
  const url = s.app.storage.objectUrl(key);
  const first = await hook({ url }, { authorization: ana.token });
  t.deepEqual([first.status, first.json().data.queued], [200, true], 'queued at first');
  const id = first.json().data.capture.id;
  const failed = await settled(s.app, id);
  t.deepEqual([failed.state, failed.error_code], ['failed', 'not_sqlite'], 'it fails: not_sqlite');
  const again = await hook({ url }, { authorization: ana.token });
  t.deepEqual(again.json().data, { success: true, url, queued: false, capture: { id, state: 'failed' }, reason: 'capture_failed' }, 'a repeat: queued false, reason capture_failed');
  const event = await hook(minioEvent(key, 'x', 1), { authorization: `Bearer ${WEBHOOK_TOKEN}` });
  t.deepEqual(
    [event.json().data.queued, event.json().data.reason, event.json().data.objects[0]],
    [false, 'capture_failed', { key, queued: false, capture: { id, state: 'failed' }, reason: 'capture_failed' }],
    'the same by a storage event',
  );
  await putFile(s.app, 'rig4/notes.txt', junk);
  const txt = await hook({ url: s.app.storage.objectUrl('rig4/notes.txt') }, { authorization: ana.token });
  t.deepEqual([txt.status, txt.json().data], [200, { success: true, url: s.app.storage.objectUrl('rig4/notes.txt'), queued: false, capture: null, reason: 'not_a_capture_file' }], 'not a capture file: nothing queued, why');
  t.equal(await s.app.db.models.Capture.count({ where: { key: 'rig4/notes.txt' } }), 0, 'no capture for it');
});

test('40 duplicate webhooks for one object at once: one capture, one job, 40 x 200 queued true', async (t) => {
  const key = 'dup/one.sqlite';
  await putFile(s.app, key, made.path);
  const url = s.app.storage.objectUrl(key);
  const jobsBefore = await s.app.db.models.Job.count();
  const results = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0 ? hook({ url }, { authorization: ana.token }) : hook(minioEvent(key, 'any', 1), { authorization: `Bearer ${WEBHOOK_TOKEN}` }),
    ),
  );
  t.deepEqual(results.map((r) => r.status), results.map(() => 200), '40 x 200, no error');
  const ids = new Set(results.map((r) => r.json().data.capture?.id));
  t.equal(ids.size, 1, 'every answer names the same capture');
  t.ok(results.every((r) => r.json().data.queued === true), 'each says queued');
  t.equal(await s.app.db.models.Capture.count({ where: { key } }), 1, 'one capture');
  t.equal((await s.app.db.models.Job.count()) - jobsBefore, 1, 'one job');
  await settled(s.app, [...ids][0]);
});

test('GET /api/v1/captures: token, filters, pages; GET /api/v1/captures/:id', async (t) => {
  await setup();
  const get = (p: string, headers: Record<string, string> = { authorization: ana.token }) => http(`${s.url}${p}`, { headers });
  t.equal((await get('/api/v1/captures', {})).status, 401, 'no token: 401');
  const all = await get('/api/v1/captures?limit=500');
  t.equal(all.status, 200);
  const total = all.json().data.captures.length;
  t.ok(total >= 52, `${total} captures`);
  const first = await get('/api/v1/captures?limit=20');
  const page1 = first.json().data;
  t.equal(page1.captures.length, 20, 'a page of 20');
  const second = (await get(`/api/v1/captures?limit=20&before=${page1.next_before}`)).json().data;
  t.ok(second.captures[0].id < page1.captures[19].id, 'next page continues below');
  const ingested = (await get('/api/v1/captures?state=ingested&limit=500')).json().data.captures;
  t.ok(ingested.length > 0 && ingested.every((c: { state: string }) => c.state === 'ingested'), 'state filter');
  t.equal((await get('/api/v1/captures?state=bogus')).status, 400, 'unknown state: 400');
  const one = await get(`/api/v1/captures/${ingested[0].id}`);
  t.equal(one.status, 200);
  t.equal(one.json().data.capture.id, ingested[0].id, 'one capture by id');
  t.equal((await get('/api/v1/captures/999999')).status, 404, 'unknown id: 404');
  t.equal((await get('/api/v1/captures/abc')).status, 400, 'bad id: 400');
  const c = one.json().data.capture;
  for (const k of ['bucket', 'key', 'etag', 'size', 'sha256', 'tables', 'page_size', 'page_count', 'state', 'attempts', 'last_error', 'progress', 'rig_id', 'project', 'created_at']) {
    t.ok(k in c, `field ${k}`);
  }
});

test('teardown', async (t) => {
  await setup();
  await closeServer(t, s);
});
