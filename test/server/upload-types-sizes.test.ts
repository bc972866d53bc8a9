// The embedded store's PUT as S3 clients use it: any Content-Type is stored and returned on GET;
// and a signed URL is tied to its own reservation's size, whatever other reservations the key has.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { fixture } from '../helpers/fixture.ts';
import { createHosts, type Hosts } from '../helpers/netns.ts';
import { closeServer } from '../helpers/closed.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { closedPort } from '../helpers/storage.ts';
import { tmpDir } from '../helpers/tmp.ts';

const GW = '10.144.121.1';
let net: Hosts;
let s: TestServer;
let port = 0;
let base = '';
const files = tmpDir();
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function reserve(key: string, size: number): Promise<{ url: string; id: number }> {
  const res = await net.request('rig', { url: `${base}/api/v1/rigs/upload?key=${encodeURIComponent(key)}&size=${size}`, headers: { host: `${GW}:${port}` } });
  if (res.status !== 200) throw new Error(`reserve ${key}: ${res.status} ${res.body}`);
  return JSON.parse(res.body) as { url: string; id: number };
}

function file(body: Buffer): string {
  const p = path.join(files, `${sha256(body).slice(0, 16)}.bin`);
  writeFileSync(p, body);
  return p;
}

/** curl -T from the rig, with extra curl arguments; the HTTP status and body. */
async function put(url: string, body: Buffer, extra: string[] = []) {
  const res = await net.curl('rig', ['-X', 'PUT', '-T', file(body), ...extra, url]);
  return { status: res.status, body: res.body };
}

const state = async (id: number) => (await s.app.db.models.Upload.findByPk(id))?.state;
const dataFiles = () => {
  const dir = path.join(s.config.data_dir, 'objects', 'captures');
  return existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith('.data')).length : 0;
};

const setup = fixture(async () => {
  net = await createHosts([{ name: 'rig', addr: '10.144.121.2', gw: GW }]);
  port = await closedPort();
  base = `http://${GW}:${port}`;
  s = await startServer({ server: { port }, storage: { public_url: base } }, { host: '::', port });
});

test('any Content-Type (or none) is stored, and a GET returns it', async (t) => {
  await setup();
  const cases: Array<[string, string | null]> = [
    ['octet.bin', 'application/octet-stream'],
    ['table.csv', 'text/csv'],
    ['made-up.cap', 'application/x-rig-capture+sqlite; version=2'],
    ['json.json', 'application/json'],
    ['none.bin', null],
  ];
  for (const [key, type] of cases) {
    const body = randomBytes(5000);
    const { url } = await reserve(`types/${key}`, body.length);
    // curl -T sends no Content-Type of its own; -H sets one.
    const res = await put(url, body, type === null ? [] : ['-H', `Content-Type: ${type}`]);
    t.equal(res.status, 200, `PUT with ${type ?? 'no'} Content-Type: 200 ${res.body.slice(0, 120)}`);
    const got = await net.request('rig', { url: await s.app.storage.presignGet(`types/${key}`, 60) });
    t.equal(got.status, 200, `GET ${key}: 200`);
    t.equal(got.headers['content-type'], type ?? 'application/octet-stream', `GET ${key}: Content-Type ${type ?? 'application/octet-stream (none was sent)'}`);
    t.ok(got.bodyBuffer.equals(body), `GET ${key}: same bytes`);
  }
  const node = await reserve('types/node-http.txt', 3);
  const viaNode = await net.request('rig', { url: node.url, method: 'PUT', headers: { 'content-type': 'text/plain; charset=us-ascii' }, body: 'abc' });
  t.equal(viaNode.status, 200, 'node:http PUT with text/plain; charset=us-ascii: 200');
  t.equal((await s.app.storage.stat('types/node-http.txt'))?.contentType, 'text/plain; charset=us-ascii', 'stored exactly as sent');
});

test('a signed URL takes only its own reservation\'s size', async (t) => {
  await setup();
  const ten = randomBytes(10);
  const twenty = randomBytes(20);
  const a = await reserve('sized/k.bin', 10);
  const b = await reserve('sized/k.bin', 20);
  const before = dataFiles();

  const wrong = await put(a.url, twenty);
  t.equal(wrong.status, 400, "URL of the 10-byte reservation with 20 bytes (another reservation's size): 400");
  t.match(wrong.body, /<Code>EntityTooLarge<\/Code>/, 'S3-style XML error EntityTooLarge');
  t.match(wrong.body, /exactly 10 bytes[^<]*Content-Length is 20/, 'the message names both sizes');
  const short = await put(a.url, randomBytes(5));
  t.equal(short.status, 400, 'with 5 bytes: 400');
  t.match(short.body, /<Code>EntityTooSmall<\/Code>/, 'EntityTooSmall');
  const long = await put(b.url, randomBytes(21));
  t.equal(long.status, 400, 'URL of the 20-byte reservation with 21 bytes: 400');
  t.equal(await s.app.storage.stat('sized/k.bin'), null, 'nothing stored');
  t.equal(dataFiles(), before, 'no object file added');
  t.deepEqual([await state(a.id), await state(b.id)], ['reserved', 'reserved'], 'both reservations still open');

  const tampered = new URL(a.url);
  tampered.searchParams.set('reservation', String(b.id));
  const moved = await put(tampered.toString(), twenty);
  t.equal(moved.status, 403, 'URL edited to name the other reservation: 403');
  t.match(moved.body, /<Code>SignatureDoesNotMatch<\/Code>/, 'SignatureDoesNotMatch');

  t.equal((await put(a.url, ten)).status, 200, 'the 10-byte URL with 10 bytes: 200');
  t.deepEqual([await state(a.id), await state(b.id)], ['uploaded', 'reserved'], 'its own reservation is uploaded, not the other');
  t.equal((await s.app.storage.stat('sized/k.bin'))?.etag, sha256(ten), 'those 10 bytes stored');
  t.equal((await put(b.url, twenty)).status, 200, 'the 20-byte URL with 20 bytes: 200');
  t.equal(await state(b.id), 'uploaded', 'its reservation uploaded');
  t.equal((await s.app.storage.stat('sized/k.bin'))?.etag, sha256(twenty), 'the 20 bytes replace them');
});

test('a chunked PUT (no Content-Length) is still held to its reservation\'s size', async (t) => {
  await setup();
  const { url, id } = await reserve('sized/chunked.bin', 8);
  const tooLong = await put(url, randomBytes(9), ['-H', 'Transfer-Encoding: chunked']);
  t.equal(tooLong.status, 400, `9 bytes chunked: 400 ${tooLong.body.slice(0, 80)}`);
  t.equal(await state(id), 'reserved', 'still reserved');
  t.equal((await put(url, randomBytes(8), ['-H', 'Transfer-Encoding: chunked'])).status, 200, '8 bytes chunked: 200');
});

test('teardown', async (t) => {
  await setup();
  await closeServer(t, s);
  await net.destroy();
});
