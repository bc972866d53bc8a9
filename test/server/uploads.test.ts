// Rig uploads end to end: clients in a network namespace inside the VPN reserve with
// GET /api/v1/rigs/upload and PUT the file with curl to the signed URL of the embedded store.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { fixture } from '../helpers/fixture.ts';
import { createHosts, type Hosts } from '../helpers/netns.ts';
import { WAIT_MS, waitFor } from '../helpers/jobs.ts';
import { closeServer } from '../helpers/closed.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { closedPort } from '../helpers/storage.ts';
import { tmpDir } from '../helpers/tmp.ts';

const GW = '10.144.71.1';
let net: Hosts;
let s: TestServer;
let port = 0;
let base = '';
const files = tmpDir();

function file(name: string, bytes: number): { path: string; size: number; sha256: string } {
  const p = path.join(files, name);
  const data = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) data[i] = (i * 31 + name.length) & 0xff;
  writeFileSync(p, data);
  return { path: p, size: bytes, sha256: createHash('sha256').update(data).digest('hex') };
}

async function reserve(query: string, from: 'inside' | 'outside' = 'inside') {
  const res = await net.request(from, { url: `http://${net.host(from).serverAddr}:${port}/api/v1/rigs/upload?${query}`, headers: { host: `${GW}:${port}` } });
  return { status: res.status, headers: res.headers, body: res.body, json: () => JSON.parse(res.body) };
}

/** curl -T from inside the VPN; returns the HTTP status and body. */
async function putFile(url: string, filePath: string, extra: string[] = []) {
  const res = await net.curl('inside', ['-X', 'PUT', '-T', filePath, ...extra, url]);
  return { status: res.status, body: res.body };
}

function objectFiles(): string[] {
  const dir = path.join(s.config.data_dir, 'objects', 'captures');
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith('.data'));
}

/** Embedded store served on the VPN address. */
const setup = fixture(async () => {
  net = await createHosts([
    { name: 'inside', addr: '10.144.71.2', gw: GW },
    { name: 'outside', addr: '10.145.71.2', gw: '10.145.71.1' },
  ]);
  port = await closedPort();
  base = `http://${GW}:${port}`;
  s = await startServer({ server: { port }, storage: { public_url: base, max_upload_size: 300 * 1024 * 1024 } }, { host: '::', port });
});

test('reserve, PUT with curl, reserve again: exists and size as the seed says', async (t) => {
  await setup();
  const f = file('cap1.sqlite', 4096);
  const first = await reserve(`key=rig7/cap1.sqlite&size=${f.size}`);
  t.equal(first.status, 200);
  t.equal(first.headers['content-type'], 'application/json; charset=utf-8');
  const body = first.json();
  t.deepEqual(Object.keys(body).sort(), ['exists', 'id', 'size', 'success', 'url'], 'exactly the seed fields');
  t.equal(body.success, true);
  t.equal(body.exists, false, 'no object yet');
  t.equal(body.size, null, 'size null when no object has the key');
  t.equal(typeof body.id, 'number');
  const url = new URL(body.url);
  t.equal(`${url.protocol}//${url.host}${url.pathname}`, `${base}/captures/rig7/cap1.sqlite`, 'path-style object URL');
  for (const p of ['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-Expires', 'X-Amz-SignedHeaders', 'X-Amz-Signature']) {
    t.ok(url.searchParams.get(p), `signed: ${p}`);
  }
  t.equal(url.searchParams.get('X-Amz-Expires'), '900', 'valid 900 s');

  const put = await putFile(body.url, f.path);
  t.equal(put.status, 200, `PUT with curl: 200 ${put.body}`);
  const info = await s.app.storage.stat('rig7/cap1.sqlite');
  t.equal(info?.etag, f.sha256, 'stored: same bytes (etag = SHA-256)');
  const upload = await s.app.db.models.Upload.findByPk(body.id);
  t.equal(upload?.state, 'uploaded', 'upload record: uploaded');
  t.equal(Number(upload?.bytes_seen), f.size, 'bytes seen = size');

  const again = (await reserve(`key=rig7/cap1.sqlite&size=${f.size}`)).json();
  t.equal(again.exists, true, 'same key and size: exists');
  t.equal(again.size, f.size, 'and its size');
  t.ok(again.url, 'a URL all the same (to overwrite)');
  t.notEqual(again.id, body.id, 'a new upload record');
  const other = (await reserve(`key=rig7/cap1.sqlite&size=${f.size + 1}`)).json();
  t.equal(other.exists, false, 'other size: exists false');
  t.equal(other.size, f.size, 'with the stored size');
});

test('uploads are linked to the rig reporting from the same VPN address; project becomes its current one', async (t) => {
  await setup();
  const report = await net.request('inside', {
    url: `http://${GW}:${port}/api/v1/rigs/rig7`,
    method: 'PUT',
    headers: { host: `${GW}:${port}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'rig_serial=SN7&gpsd_latitude=52.1&gpsd_longitude=4.3&local_ip=192.168.1.7&software_version=1.2&git_branch=main',
  });
  t.equal(report.status, 200, 'rig7 reports from 10.144.71.2');
  const res = (await reserve('key=rig7/survey.sqlite&size=5&project=North-Sea')).json();
  const upload = await s.app.db.models.Upload.findByPk(res.id);
  t.equal(upload?.rig_id, 'rig7', 'upload linked to rig7');
  t.equal(upload?.peer_address, '10.144.71.2', 'peer address normalised from ::ffff:');
  const rig = await s.app.db.models.Rig.findByPk('rig7');
  t.equal(rig?.current_project, 'north-sea', "the rig's current project");
  const next = (await reserve('key=rig7/later.sqlite&size=5')).json();
  t.equal((await s.app.db.models.Upload.findByPk(next.id))?.project, null, 'no project given: none recorded on the upload');
  t.equal((await s.app.db.models.Rig.findByPk('rig7'))?.current_project, 'north-sea', 'and the rig keeps its project');
});

test('refused PUTs store nothing', async (t) => {
  await setup();
  const f = file('cap2.sqlite', 2048);
  const { url } = (await reserve(`key=rig7/cap2.sqlite&size=${f.size}`)).json();
  const before = objectFiles().length;

  const tampered = new URL(url);
  const sig = tampered.searchParams.get('X-Amz-Signature') as string;
  tampered.searchParams.set('X-Amz-Signature', (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1));
  const bad = await putFile(tampered.toString(), f.path);
  t.equal(bad.status, 403, 'tampered signature: 403');
  t.match(bad.body, /<Code>SignatureDoesNotMatch<\/Code>/, 'S3-style XML error');

  const otherKey = new URL(url);
  otherKey.pathname = '/captures/rig7/other.sqlite';
  t.equal((await putFile(otherKey.toString(), f.path)).status, 403, 'URL reused for another key: 403');

  const long = file('long.bin', f.size + 1);
  const tooLong = await putFile(url, long.path);
  t.ok(tooLong.status >= 400 && tooLong.status < 500, `one byte too many: ${tooLong.status}`);
  const short = file('short.bin', f.size - 1);
  const tooShort = await putFile(url, short.path);
  t.ok(tooShort.status >= 400 && tooShort.status < 500, `one byte short: ${tooShort.status}`);

  t.equal(await s.app.storage.stat('rig7/cap2.sqlite'), null, 'nothing stored under the key');
  t.equal(objectFiles().length, before, 'no object file added');
  t.equal((await putFile(url, f.path)).status, 200, 'the right bytes still go through');
});

test('an expired URL is refused and the reservation ends expired', async (t) => {
  await setup();
  const short = await startServer({ server: { port: await closedPort() }, storage: { upload_url_ttl: 1 } }, { host: '::' });
  try {
    const shortPort = Number(short.server.info.port);
    const res = await net.request('inside', { url: `http://${GW}:${shortPort}/api/v1/rigs/upload?key=late.sqlite&size=10`, headers: { host: `${GW}:${shortPort}` } });
    const { url, id } = JSON.parse(res.body);
    t.match(url, /X-Amz-Expires=1&/, '1 s URL');
    await new Promise((r) => setTimeout(r, 2200));
    const f = file('late.sqlite', 10);
    const signed = new URL(url);
    signed.host = `${GW}:${shortPort}`;
    const put = await putFile(signed.toString(), f.path);
    t.equal(put.status, 403, 'expired: 403');
    t.match(put.body, /<Code>AccessDenied<\/Code>[\s\S]*expired/i, 'says it expired');
    t.equal(await short.app.storage.stat('late.sqlite'), null, 'nothing stored');
    await waitFor(async () => (await short.app.db.models.Upload.findByPk(id))?.state === 'expired', WAIT_MS, 'the monitor to mark it expired', 100);
    t.pass('the monitor marked it expired');
  } finally {
    await short.close();
  }
});

test('bad keys and sizes: 400 JSON naming the field; outside the VPN: 403', async (t) => {
  await setup();
  const cases: [string, string][] = [
    ['size=10', 'key'],
    ['key=&size=10', 'key'],
    ['key=a.sqlite', 'size'],
    ['key=a.sqlite&size=', 'size'],
    ['key=a.sqlite&size=-1', 'size'],
    ['key=a.sqlite&size=1.5', 'size'],
    ['key=a.sqlite&size=ten', 'size'],
    ['key=a.sqlite&size=314572801', 'size'],
    ['key=a.sqlite&size=1&size=2', 'size'],
    ['key=/a.sqlite&size=1', 'key'],
    ['key=a/&size=1', 'key'],
    ['key=a//b&size=1', 'key'],
    ['key=a/../b&size=1', 'key'],
    ['key=./a&size=1', 'key'],
    ['key=a%00b&size=1', 'key'],
    [`key=${'k'.repeat(1025)}&size=1`, 'key'],
    ['key=a&key=b&size=1', 'key'],
    ['key=a.sqlite&size=1&project=Not%20A%20Slug', 'project'],
  ];
  for (const [query, field] of cases) {
    const res = await reserve(query);
    t.equal(res.status, 400, `${query.slice(0, 40)}: 400`);
    const body = res.json();
    t.equal(body.error?.details?.[0]?.field, field, `${query.slice(0, 40)}: names ${field}`);
  }
  const ok = await reserve(`key=${encodeURIComponent('é/'.repeat(10) + 'x')}&size=0&project=Survey-2026`);
  t.equal(ok.status, 200, `unicode key, size 0, a project: 200 ${ok.body}`);
  const upload = await s.app.db.models.Upload.findByPk(ok.json().id);
  t.equal(upload?.project, 'survey-2026', 'project slug stored');
  const outside = await reserve('key=a.sqlite&size=1', 'outside');
  t.equal(outside.status, 403, 'client outside the VPN: 403');
  t.match(String(outside.headers['content-type']), /^text\/html; charset=UTF-8/);
});

test('a 200 MB PUT streams: server memory stays flat', async (t) => {
  await setup();
  const size = 200 * 1024 * 1024;
  const big = path.join(files, 'big.bin');
  const { execFileSync } = await import('node:child_process');
  execFileSync('sh', ['-c', `head -c ${size} /dev/urandom > ${big}`]);
  // A first, smaller PUT starts the store's writer thread and fills its slabs once (a fixed cost).
  const warm = path.join(files, 'warm.bin');
  execFileSync('sh', ['-c', `head -c ${16 * 1024 * 1024} /dev/zero > ${warm}`]);
  const warmUp = (await reserve(`key=rig7/warm.bin&size=${16 * 1024 * 1024}`)).json();
  t.equal((await putFile(warmUp.url, warm)).status, 200, 'warm-up PUT stored');
  const { url } = (await reserve(`key=rig7/big.bin&size=${size}`)).json();
  global.gc?.();
  const start = process.memoryUsage().rss;
  let peak = start;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  const put = await putFile(url, big);
  clearInterval(sampler);
  t.equal(put.status, 200, '200 MB stored');
  t.equal((await s.app.storage.stat('rig7/big.bin'))?.size, size, 'whole');
  const growth = (peak - start) / 1024 / 1024;
  t.ok(growth < 64, `RSS grew ${growth.toFixed(1)} MB during the upload (< 64 MB)`);
});

test('teardown', async (t) => {
  await setup();
  await closeServer(t, s);
  await net.destroy();
});
