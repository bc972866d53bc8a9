// POST /api/v1/webhooks/capture_uploaded as the seed shows it and as MinIO calls it: auth by user
// token (each transport) or the webhook token, the seed's body and cookies, one capture per object
// version whatever notifies it, 422 without any request for URLs that are not our storage; storage events only with the webhook token, at most 100 records, each object
// stat'ed (a forged etag, size or object queues nothing of its own).
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import test from 'tape';
import { fixture } from '../helpers/fixture.ts';
import { putFile, settled } from '../helpers/captures.ts';
import { makeCapture, type MadeCapture } from '../helpers/capture-files.ts';
import { cookieValue, http } from '../helpers/http.ts';
import { closeServer } from '../helpers/closed.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { minioEvent, WEBHOOK_TOKEN, webhookWorld, type WebhookWorld } from '../helpers/webhook.ts';

const files = tmpDir();
let s: TestServer;
let ana: { id: string; token: string };
let made: MadeCapture;
let base = '';
let hook: WebhookWorld['hook'];

const setup = fixture(async () => {
  ({ s, ana, made, base, hook } = await webhookWorld(files));
});

test('user token (raw header, Bearer, cookie): 200, the seed body and both cookies', async (t) => {
  await setup();
  const url = `${base}/captures/rig1/a.sqlite`;
  const transports: [string, Record<string, string>][] = [
    ['raw Authorization', { authorization: ana.token }],
    ['Bearer', { authorization: `Bearer ${ana.token}` }],
    ['token cookie', { cookie: `token=${ana.token}` }],
  ];
  let captureId = 0;
  for (const [i, [how, headers]] of transports.entries()) {
    const res = await hook({ url }, headers);
    t.equal(res.status, 200, `${how}: 200`);
    if (i === 0) captureId = res.json().data.capture?.id;
    const state = i === 0 ? res.json().data.capture?.state : 'ingested';
    t.deepEqual(
      res.json(),
      { token: ana.token, data: { success: true, url, queued: true, capture: { id: captureId, state } } },
      `${how}: the seed fields and the capture (queued true: the first call queues, later ones find it ingested)`,
    );
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8', `${how}: JSON`);
    t.equal(res.headers['vary'], 'Accept, Origin', `${how}: Vary as the seed`);
    const token = res.cookies.find((c) => c.startsWith('token='));
    t.equal(cookieValue(res.cookies, 'token'), ana.token, `${how}: token cookie holds the token`);
    t.match(String(token), /; Path=\/api(;|$)/, `${how}: token path=/api`);
    t.match(String(token), /; Expires=[^;]+/, `${how}: token expires`);
    t.match(String(token), /; HttpOnly(;|$)/, `${how}: token HttpOnly`);
    t.match(String(token), /; SameSite=Lax(;|$)/, `${how}: token SameSite=Lax`);
    const session = res.cookies.find((c) => c.startsWith('_service_pm_session='));
    t.match(String(session), /; Path=\/(;|$)/, `${how}: session path=/`);
    t.match(String(session), /; HttpOnly(;|$)/, `${how}: session HttpOnly`);
    t.match(String(session), /; SameSite=Lax(;|$)/, `${how}: session SameSite=Lax`);
    if (i === 0) {
      const [c] = (await s.app.captures.list()).captures;
      await settled(s.app, c.id);
    }
  }
  t.equal((await s.app.captures.list()).captures.length, 1, 'three webhooks, one capture');
  t.equal(await s.app.db.models.Job.count(), 1, 'one job');
  const res = await hook({ url }, { authorization: ana.token });
  t.deepEqual([res.json().data.queued, res.json().data.capture], [true, { id: captureId, state: 'ingested' }], 'a repeat for an ingested capture: queued true, the capture ingested');
  t.equal(await s.app.db.models.Job.count(), 1, 'still one job');
});

test('webhook token: 200 with an empty token and no cookies; never from a cookie; wrong or missing: 401', async (t) => {
  await setup();
  const url = `${base}/captures/rig1/a.sqlite`;
  const res = await hook({ url }, { authorization: `Bearer ${WEBHOOK_TOKEN}` });
  t.equal(res.status, 200, 'Bearer <webhook token>: 200');
  const [c] = (await s.app.captures.list()).captures;
  t.deepEqual(res.json(), { token: '', data: { success: true, url, queued: true, capture: { id: c.id, state: 'ingested' } } }, 'token is "" (the webhook token is not a session and is never echoed)');
  t.deepEqual(res.cookies, [], 'no cookies');
  t.notOk(res.text.includes(WEBHOOK_TOKEN), 'the webhook token is nowhere in the body');
  t.equal((await hook({ url }, { authorization: WEBHOOK_TOKEN })).status, 200, 'raw Authorization header: 200');

  const refused: [string, Record<string, string>, string][] = [
    ['no token', {}, 'missing_token'],
    ['wrong token', { authorization: 'nope' }, 'invalid_token'],
    ['wrong Bearer', { authorization: `Bearer ${WEBHOOK_TOKEN}x` }, 'invalid_token'],
    ['webhook token prefix', { authorization: `Bearer ${WEBHOOK_TOKEN.slice(0, -1)}` }, 'invalid_token'],
    ['webhook token as a cookie', { cookie: `token=${WEBHOOK_TOKEN}` }, 'invalid_token'],
    ['malformed header', { authorization: 'Token a b' }, 'invalid_token'],
  ];
  for (const [how, headers, code] of refused) {
    const r = await hook({ url }, headers);
    t.deepEqual([r.status, r.json().error?.code], [401, code], `${how}: 401 ${code}`);
    t.deepEqual(r.cookies, [], `${how}: no cookies`);
  }
  const before = await s.app.captures.list();
  t.equal(before.captures.length, 1, 'refused calls queued nothing');
});

test('no webhook token configured: an empty Bearer does not pass', async (t) => {
  await setup();
  const other = await startServer();
  try {
    const r = await http(`${other.url}/api/v1/webhooks/capture_uploaded`, { json: { url: 'x' }, headers: { authorization: 'Bearer ' } });
    t.equal(r.status, 401, 'empty bearer: 401');
  } finally {
    await other.close();
  }
});

test('the same object by webhook and by MinIO event: one capture; event keys are form-decoded', async (t) => {
  await setup();
  const key = 'rig 2/cap+one é.sqlite';
  const cap = await makeCapture(path.join(files, 'b.sqlite'), { tables: [{ name: 't', columns: [{ name: 'a', type: 'INTEGER' }], rows: 4000 }] });
  const info = await putFile(s.app, key, cap.path);
  const url = s.app.storage.objectUrl(key);
  const byUrl = await hook({ url }, { authorization: ana.token });
  t.deepEqual([byUrl.status, byUrl.json().data.queued], [200, true], 'webhook: queued');
  const event = minioEvent(key, info.etag, info.size);
  t.ok(event.Records[0].s3.object.key.includes('+') && event.Records[0].s3.object.key.includes('%2B'), 'the event key is form-encoded ("+" is a space, %2B a plus)');
  const byEvent = await hook(event, { authorization: `Bearer ${WEBHOOK_TOKEN}` });
  t.equal(byEvent.status, 200, 'event: 200');
  const capId = (await s.app.captures.list()).captures.find((c) => c.key === key)!.id;
  t.deepEqual(
    byEvent.json(),
    {
      token: '',
      data: {
        success: true,
        url,
        queued: true,
        capture: { id: capId, state: byEvent.json().data.capture.state },
        objects: [{ key, queued: true, capture: { id: capId, state: byEvent.json().data.objects[0].capture.state } }],
        ignored: 0,
      },
    },
    'event: still queued, url of the object, the object named with its capture',
  );
  const quoted = await hook(minioEvent(key, `"${info.etag}"`, info.size), { authorization: `Bearer ${WEBHOOK_TOKEN}` });
  t.equal(quoted.status, 200, 'a quoted eTag is the same version');
  const list = (await s.app.captures.list()).captures.filter((c) => c.key === key);
  t.equal(list.length, 1, 'one capture for the object');
  t.equal(await s.app.db.models.Job.count({ where: { id: list[0].job_id! } }), 1, 'one job for it');
  const done = await settled(s.app, list[0].id);
  t.deepEqual([done.state, done.tables?.[0].rows], ['ingested', 4000], 'ingested with its row count');

  const removed = await hook(minioEvent(key, info.etag, info.size, 'captures', 's3:ObjectRemoved:Delete'), { authorization: `Bearer ${WEBHOOK_TOKEN}` });
  t.deepEqual([removed.status, removed.json().data.queued, removed.json().data.reason, removed.json().data.capture], [200, false, 'no_capture_objects', null], 'a removal event: acknowledged, nothing queued, why');
  const log = await hook(minioEvent('rig2/log.txt', info.etag, 10), { authorization: `Bearer ${WEBHOOK_TOKEN}` });
  t.deepEqual([log.status, log.json().data.queued], [200, false], 'a log file event: acknowledged, not a capture');
  t.equal((await s.app.captures.list()).captures.filter((c) => c.key === 'rig2/log.txt').length, 0, 'no capture for the log');
});

test('URLs and events that are not our storage: 422, and the canary sees no request', async (t) => {
  await setup();
  const seen: string[] = [];
  const canary = createServer((req: IncomingMessage, res) => {
    seen.push(`${req.method} ${req.headers.host}${req.url}`);
    res.end('canary');
  });
  await new Promise<void>((resolve) => canary.listen(0, '::', resolve));
  const port = (canary.address() as AddressInfo).port;
  const before = await s.app.db.models.Capture.count();
  const urls = [
    `http://169.254.169.254/latest/meta-data/iam/security-credentials/captures.sqlite`,
    `http://169.254.169.254:${port}/captures/rig1/a.sqlite`,
    `http://127.0.0.1:${port}/captures/rig1/a.sqlite`,
    `http://localhost:${port}/captures/rig1/a.sqlite`,
    `http://[::1]:${port}/captures/rig1/a.sqlite`,
    `http://[::ffff:127.0.0.1]:${port}/captures/rig1/a.sqlite`,
    `http://[::ffff:7f00:1]:${port}/captures/rig1/a.sqlite`,
    `http://2130706433:${port}/captures/rig1/a.sqlite`,
    `${base}@127.0.0.1:${port}/captures/rig1/a.sqlite`,
    `${base}/other-bucket/rig1/a.sqlite`,
    `${base}/captures/../other-bucket/a.sqlite`,
    `${base}/captures/rig1/../../a.sqlite`,
    `${base}/captures/rig1/%2e%2e/a.sqlite`,
    `${base}/captures/rig1%2f..%2fa.sqlite`,
    `file:///etc/passwd`,
    `gopher://127.0.0.1:${port}/_x`,
    `${base.replace('http:', 'https:')}/captures/rig1/a.sqlite`,
  ];
  for (const url of urls) {
    const r = await hook({ url }, { authorization: ana.token });
    t.deepEqual([r.status, r.json().error?.code], [422, 'not_storage_url'], `422 not_storage_url: ${url}`);
  }
  const events: [string, unknown][] = [
    ['another bucket', minioEvent('rig1/a.sqlite', 'abc', 1, 'other-bucket')],
    ['".." in the key', minioEvent('../a.sqlite', 'abc', 1)],
    ['"..": encoded', { Records: [{ eventName: 's3:ObjectCreated:Put', s3: { bucket: { name: 'captures' }, object: { key: 'rig1/%2E%2E/%2E%2E/a.sqlite', eTag: 'abc', size: 1 } } }] }],
    ['malformed encoding', { Records: [{ eventName: 's3:ObjectCreated:Put', s3: { bucket: { name: 'captures' }, object: { key: 'a%zz.sqlite', eTag: 'abc', size: 1 } } }] }],
  ];
  for (const [what, body] of events) {
    const r = await hook(body, { authorization: `Bearer ${WEBHOOK_TOKEN}` });
    t.deepEqual([r.status, r.json().error?.code], [422, 'not_storage_url'], `event with ${what}: 422`);
  }
  const bad: [string, unknown][] = [
    ['no url', {}],
    ['url not a string', { url: 7 }],
    ['an array', [{ url: 'x' }]],
  ];
  for (const [what, body] of bad) {
    const r = await hook(body, { authorization: ana.token });
    t.equal(r.status, 400, `${what}: 400`);
  }
  // Give any stray connection time to arrive before looking.
  await new Promise((r) => setTimeout(r, 300));
  t.deepEqual(seen, [], 'the canary saw no request');
  t.equal(await s.app.db.models.Capture.count(), before, 'nothing queued');
  await new Promise<void>((resolve) => canary.close(() => resolve()));
});

test('an object that is not in storage: 404 object_not_found, nothing queued', async (t) => {
  await setup();
  const r = await hook({ url: `${base}/captures/rig9/missing.sqlite` }, { authorization: ana.token });
  t.deepEqual([r.status, r.json().error?.code], [404, 'object_not_found'], '404 object_not_found');
  t.equal((await s.app.captures.list()).captures.filter((c) => c.key === 'rig9/missing.sqlite').length, 0, 'no capture');
});

test('storage events: a user token gets 403 and queues nothing; the seed body still works for users', async (t) => {
  await setup();
  const key = 'forged/u.sqlite';
  await putFile(s.app, key, made.path);
  const jobs = await s.app.db.models.Job.count();
  const captures = await s.app.db.models.Capture.count();
  for (const [how, headers] of [
    ['raw token', { authorization: ana.token }],
    ['Bearer', { authorization: `Bearer ${ana.token}` }],
    ['cookie', { cookie: `token=${ana.token}` }],
  ] as const) {
    const r = await hook(minioEvent(key, 'ffff', 1), headers);
    t.deepEqual([r.status, r.json().error?.code], [403, 'webhook_token_required'], `${how} + Records: 403 webhook_token_required`);
    t.match(r.json().error?.message, /webhook_token/, `${how}: the message names ingest.webhook_token`);
  }
  t.equal(await s.app.db.models.Job.count(), jobs, 'no job');
  t.equal(await s.app.db.models.Capture.count(), captures, 'no capture');
  const url = s.app.storage.objectUrl(key);
  const seed = await hook({ url }, { authorization: ana.token });
  const made_ = (await s.app.captures.list()).captures.find((c) => c.key === key)!;
  t.deepEqual([seed.status, seed.json()], [200, { token: ana.token, data: { success: true, url, queued: true, capture: { id: made_.id, state: seed.json().data.capture?.state } } }], 'the seed\'s {url} with a user token: 200, queued, its capture');
  t.ok(['queued', 'ingesting', 'ingested'].includes(seed.json().data.capture?.state), `capture state ${seed.json().data.capture?.state}`);
  await settled(s.app, (await s.app.captures.list()).captures.find((c) => c.key === key)!.id);
});

test('storage events: at most 100 records; 101 is 413 and queues nothing', async (t) => {
  await setup();
  const record = (i: number) => minioEvent(`many/${i}.sqlite`, 'abc', 1).Records[0];
  for (let i = 0; i < 101; i++) await putFile(s.app, `many/${i}.sqlite`, made.path);
  const jobs = await s.app.db.models.Job.count();
  const captures = await s.app.db.models.Capture.count();
  const over = await hook({ Records: Array.from({ length: 101 }, (_, i) => record(i)) }, { authorization: `Bearer ${WEBHOOK_TOKEN}` });
  t.deepEqual([over.status, over.json().error?.code], [413, 'too_many_records'], '101 records: 413 too_many_records');
  t.match(over.json().error?.message, /at most 100 records/, 'the message names the limit');
  const huge = await hook({ Records: Array.from({ length: 3000 }, (_, i) => record(i % 101)) }, { authorization: `Bearer ${WEBHOOK_TOKEN}` });
  t.equal(huge.status, 413, '3000 records: 413');
  t.equal(await s.app.db.models.Job.count(), jobs, 'nothing queued: no job');
  t.equal(await s.app.db.models.Capture.count(), captures, 'nothing queued: no capture');

  const limit = await hook({ Records: Array.from({ length: 100 }, (_, i) => minioEvent(`nowhere/${i}.sqlite`, 'abc', 1).Records[0]) }, { authorization: `Bearer ${WEBHOOK_TOKEN}` });
  t.equal(limit.status, 200, '100 records (the limit): 200');
  t.equal(limit.json().data.objects.length, 100, 'each record answered');
  t.equal(await s.app.db.models.Job.count(), jobs, 'objects that are not there: still no job');
});

test('storage events: a missing object queues nothing; a forged etag and size are replaced by the stat', async (t) => {
  await setup();
  const jobs = await s.app.db.models.Job.count();
  const missing = await hook(minioEvent('rig9/ghost.sqlite', 'deadbeefdeadbeefdeadbeefdeadbeef', 4096), { authorization: `Bearer ${WEBHOOK_TOKEN}` });
  t.equal(missing.status, 200, 'missing object: 200 (storage may have deleted it since)');
  const data = missing.json().data;
  t.deepEqual([data.queued, data.reason, data.capture], [false, 'object_not_found', null], 'queued false, reason object_not_found, no capture');
  t.deepEqual(data.objects, [{ key: 'rig9/ghost.sqlite', queued: false, capture: null, reason: 'object_not_found' }], 'the record says so');
  t.equal(await s.app.db.models.Job.count(), jobs, 'no job');
  t.equal(await s.app.db.models.Capture.count({ where: { key: 'rig9/ghost.sqlite' } }), 0, 'no capture');

  const key = 'forged/real.sqlite';
  const info = await putFile(s.app, key, made.path);
  const forged = await hook(minioEvent(key, '00000000000000000000000000000bad', 7), { authorization: `Bearer ${WEBHOOK_TOKEN}` });
  t.deepEqual([forged.status, forged.json().data.queued], [200, true], 'a real object with a made-up etag and size: queued');
  const caps = (await s.app.captures.list()).captures.filter((c) => c.key === key);
  t.equal(caps.length, 1, 'one capture');
  t.deepEqual([caps[0].etag, caps[0].size], [info.etag, info.size], 'it carries the etag and size of the stat, not of the body');
  t.equal(await s.app.db.models.Capture.count({ where: { etag: '00000000000000000000000000000bad' } }), 0, 'no capture with the made-up etag');
  const again = await hook(minioEvent(key, 'another-made-up-etag', 99), { authorization: `Bearer ${WEBHOOK_TOKEN}` });
  t.equal(again.status, 200, 'another made-up etag: 200');
  t.equal((await s.app.captures.list()).captures.filter((c) => c.key === key).length, 1, 'still one capture: a made-up etag is no new version');
  await settled(s.app, caps[0].id);
});

test('teardown', async (t) => {
  await setup();
  await closeServer(t, s);
});
