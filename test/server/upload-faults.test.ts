// Uploads to the embedded store that stall, crawl, break off or were left by a crash: a stalled
// connection never holds back other uploads and is aborted after storage.upload_idle_timeout_s
// with nothing left behind; a slow upload that keeps sending has no total time limit; orphaned temp
// files are removed when the store opens; what was stored before is still there, intact.
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { createHosts, type Hosts } from '../helpers/netns.ts';
import { closeServer } from '../helpers/closed.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { slowClients, type SlowEvent } from '../helpers/slow-client.ts';
import { closedPort } from '../helpers/storage.ts';
import { tmpDir } from '../helpers/tmp.ts';

const GW = '10.144.120.1';
// Long enough that the healthy PUT of the first test ends inside it on a busy machine too (from
// the first stalled connection's last byte: reserving it, writing its file and starting curl in the
// rig's namespace count too).
const IDLE_S = 20;
/** Releasing a reset or refused upload's temp file is immediate: well inside the idle timeout, yet a generous wait. */
const RELEASE_MS = (IDLE_S - 5) * 1000;
let net: Hosts;
let s: TestServer;
let port = 0;
let base = '';
const files = tmpDir();
const dataDir = tmpDir();
const tmpParts = path.join(dataDir, 'objects', '.tmp');
const acknowledged = new Map<string, string>();
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function reserve(key: string, size: number): Promise<{ url: string; id: number }> {
  const res = await net.request('rig', { url: `${base}/api/v1/rigs/upload?key=${encodeURIComponent(key)}&size=${size}`, headers: { host: `${GW}:${port}` } });
  if (res.status !== 200) throw new Error(`reserve ${key}: ${res.status} ${res.body}`);
  return JSON.parse(res.body) as { url: string; id: number };
}

/** Reserves `key` and PUTs `body` with curl from the rig; returns the status. */
async function putWithCurl(key: string, body: Buffer, maxTimeS = 60): Promise<number> {
  const file = path.join(files, `${sha256(body).slice(0, 16)}.bin`);
  writeFileSync(file, body);
  const { url } = await reserve(key, body.length);
  const res = await net.curl('rig', ['--max-time', String(maxTimeS), '-X', 'PUT', '-T', file, url], { timeoutMs: (maxTimeS + 10) * 1000 });
  return res.status;
}

async function stored(key: string): Promise<Buffer | null> {
  if (!(await s.app.storage.stat(key))) return null;
  const parts: Buffer[] = [];
  for await (const c of await s.app.storage.read(key)) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

const parts = () => (existsSync(tmpParts) ? readdirSync(tmpParts) : []);

async function noPartsWithin(ms: number): Promise<string[]> {
  const until = Date.now() + ms;
  while (parts().length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  return parts();
}

test('setup: temp files of a crashed process are removed when the store opens', async (t) => {
  mkdirSync(tmpParts, { recursive: true });
  // A pid that certainly belongs to no process now: one that just ran and exited.
  const deadPid = spawnSync('true').pid;
  const planted = [`${deadPid}-0123456789abcdef01234567.part`, `${deadPid}-00aa.json.part`, '0123456789abcdef01234567.part'];
  for (const name of planted) writeFileSync(path.join(tmpParts, name), 'left by a crash');
  net = await createHosts([{ name: 'rig', addr: '10.144.120.2', gw: GW }]);
  port = await closedPort();
  base = `http://${GW}:${port}`;
  s = await startServer({ data_dir: dataDir, server: { port }, storage: { public_url: base, upload_idle_timeout_s: IDLE_S } }, { host: '::', port });
  t.deepEqual(parts(), [], `planted ${planted.join(', ')}: all gone once the store opened`);
});

test('uploads acknowledged before the faults', async (t) => {
  for (let i = 0; i < 3; i++) {
    const body = randomBytes(300_000 + i * 4099);
    t.equal(await putWithCurl(`before/${i}.bin`, body), 200, `before/${i}.bin stored`);
    acknowledged.set(`before/${i}.bin`, sha256(body));
  }
});

let stalled: ReturnType<typeof slowClients>;
const closedOnes = (e: SlowEvent[]) => e.filter((x) => x.ev === 'closed');

test('20 stalled PUTs do not hold back a healthy one', async (t) => {
  const reqs = [];
  for (let i = 0; i < 20; i++) {
    const { url } = await reserve(`stalled/${i}.bin`, 5_000_000);
    reqs.push({ url, mode: 'stall' as const, total: 5_000_000, head: i === 0 ? 0 : 1000 + i * 333 });
  }
  stalled = slowClients(net, 'rig', reqs);
  await stalled.until((e) => e.filter((x) => x.ev === 'sent').length === 20, 60_000);
  // Let the server take in what they sent (each one's bytes sit in the store now).
  await new Promise((r) => setTimeout(r, 500));
  t.equal(closedOnes(stalled.events).length, 0, '20 connections sent headers and a few bytes (one none at all), then nothing');
  const body = randomBytes(3 * 1024 * 1024 + 77);
  // Generous bound: the old store waited for ever (every slab held by a stalled connection).
  const status = await putWithCurl('healthy.bin', body, 30);
  t.equal(status, 200, 'the healthy PUT is stored');
  t.equal(sha256((await stored('healthy.bin')) ?? Buffer.alloc(0)), sha256(body), 'whole');
  acknowledged.set('healthy.bin', sha256(body));
  t.equal(closedOnes(stalled.events).length, 0, 'and done before the idle timeout ended any stalled one');
});

test('the stalled PUTs are aborted after the idle timeout and leave nothing behind', async (t) => {
  const events = await stalled.until((e) => closedOnes(e).length === 20, IDLE_S * 1000 + 60_000);
  stalled.stop();
  const closed = closedOnes(events);
  t.equal(closed.length, 20, 'all 20 connections were closed by the server');
  const idle = closed.map((e) => e.idle);
  t.comment(`closed after ${Math.min(...idle)}..${Math.max(...idle)} ms without a byte (idle timeout ${IDLE_S * 1000} ms)`);
  t.ok(idle.every((ms) => ms >= IDLE_S * 1000 - 500), 'none before the idle timeout');
  const answers = closed.filter((e) => /^HTTP\/1\.1 400 /.test(e.status ?? '') && /<Code>RequestTimeout<\/Code>/.test(e.response ?? ''));
  t.equal(answers.length, 20, "each was answered 400 with S3's RequestTimeout before the close");
  t.deepEqual(await noPartsWithin(60_000), [], 'no temp file left');
  for (let i = 0; i < 20; i++) {
    if ((await s.app.storage.stat(`stalled/${i}.bin`)) !== null) t.fail(`stalled/${i}.bin was stored`);
  }
  const states = await s.app.db.models.Upload.findAll({ where: { state: 'reserved' } });
  t.equal(states.filter((u) => u.key.startsWith('stalled/')).length, 20, 'their reservations are still open (not uploaded)');
});

test('a PUT that trickles for longer than the idle timeout, never pausing that long, succeeds', async (t) => {
  const body = randomBytes(64 * 1024 + 5);
  const { url } = await reserve('trickled.bin', body.length);
  const pieces = 10;
  const everyMs = Math.round((IDLE_S * 1000) / 4);
  const c = slowClients(net, 'rig', [{ url, mode: 'trickle', total: body.length, body: body.toString('base64'), pieces, everyMs, headers: { connection: 'close' } }]);
  const [answer] = closedOnes(await c.until((e) => closedOnes(e).length === 1, pieces * everyMs + 60_000));
  c.stop();
  t.comment(`${pieces} pieces ${everyMs} ms apart: ${((pieces - 1) * everyMs) / 1000} s in all, idle timeout ${IDLE_S} s`);
  t.equal(answer?.status, 'HTTP/1.1 200 OK', 'stored');
  // The content round-trips through the store's own signed GET.
  const got = await net.request('rig', { url: await s.app.storage.presignGet('trickled.bin', 60) });
  t.equal(got.status, 200, 'signed GET: 200');
  t.ok(got.bodyBuffer.equals(body), 'the same bytes come back');
  acknowledged.set('trickled.bin', sha256(body));
});

test('a PUT whose client resets the connection halfway releases everything at once', async (t) => {
  const { url } = await reserve('reset.bin', 2_000_000);
  const c = slowClients(net, 'rig', [{ url, mode: 'reset', total: 2_000_000, head: 900_000 }]);
  await c.until((e) => e.some((x) => x.ev === 'reset'), 60_000);
  c.stop();
  t.deepEqual(await noPartsWithin(RELEASE_MS), [], 'no temp file left (well before any idle timeout)');
  t.equal(await s.app.storage.stat('reset.bin'), null, 'nothing stored');
});

test('a PUT the server answers by itself (a malformed chunked body) releases everything at once', async (t) => {
  const { url } = await reserve('malformed.bin', 1_000_000);
  const raw = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, 0x62), Buffer.from('\r\nnot-a-chunk-size\r\n')]);
  const c = slowClients(net, 'rig', [{ url, mode: 'stall', raw: raw.toString('base64'), headers: { 'transfer-encoding': 'chunked' } }]);
  const [closed] = closedOnes(await c.until((e) => closedOnes(e).length === 1, 60_000));
  c.stop();
  t.match(closed?.status ?? '', /^HTTP\/1\.1 400 /, `answered 400 by the server: ${closed?.status}`);
  t.deepEqual(await noPartsWithin(RELEASE_MS), [], 'no temp file left (well before any idle timeout)');
  t.equal(await s.app.storage.stat('malformed.bin'), null, 'nothing stored');
});

test('afterwards: 20 more uploads succeed, and everything acknowledged is intact', async (t) => {
  const bodies = Array.from({ length: 20 }, (_, i) => randomBytes(100_000 + i * 1000));
  const statuses = await Promise.all(bodies.map((b, i) => putWithCurl(`after/${i}.bin`, b, 60)));
  t.deepEqual(statuses, Array(20).fill(200), '20 uploads at once: all 200');
  bodies.forEach((b, i) => acknowledged.set(`after/${i}.bin`, sha256(b)));
  for (const [key, hash] of acknowledged) {
    const got = await stored(key);
    if (!got || sha256(got) !== hash) t.fail(`${key}: missing or changed`);
  }
  t.pass(`${acknowledged.size} acknowledged objects checked byte for byte`);
  t.deepEqual(parts(), [], 'no temp file left');
});

test('teardown', async (t) => {
  stalled?.stop();
  await closeServer(t, s);
  await net.destroy();
});
