// The embedded store's putObject: exact size, early abort, refusals leave nothing behind, atomic replace.
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import test from 'tape';
import { EmbeddedStorage } from '../../src/storage/embedded.ts';
import { S3Error } from '../../src/storage/s3-error.ts';
import { caught } from '../helpers/storage-contract.ts';
import { tempDir, testConfig } from '../helpers/storage.ts';

const tmp = tempDir();
test.onFinish(() => tmp.cleanup());
const store = new EmbeddedStorage(testConfig({ data_dir: tmp.dir }));
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Every file under the objects dir, relative. */
function files(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(path.relative(store.root, p));
    }
  };
  walk(store.root);
  return out.sort();
}
const tempFiles = () => files().filter((f) => f.startsWith('.tmp'));

/** A source of `total` bytes in `chunk`-sized pieces that counts how many bytes were pulled from it. */
function counted(total: number, chunk = 16 * 1024): { stream: Readable; pulled(): number } {
  let produced = 0;
  const stream = new Readable({
    read() {
      if (produced >= total) return void this.push(null);
      const n = Math.min(chunk, total - produced);
      produced += n;
      this.push(Buffer.alloc(n, 0x61));
    },
  });
  return { stream, pulled: () => produced };
}

async function content(key: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of await store.read(key)) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

test('setup', async (t) => {
  await store.ensureBucket();
  t.deepEqual(files(), [], 'empty store');
});

test('exact size: stored, visible, progress reported', async (t) => {
  const body = randomBytes(300_000);
  const progress: number[] = [];
  const info = await store.putObject('rig-1/a.db', Readable.from([body.subarray(0, 100_000), body.subarray(100_000)]), {
    expectedSize: body.length,
    onProgress: (n) => progress.push(n),
  });
  t.equal(info.size, body.length, 'size');
  t.equal(info.etag, sha256(body), 'etag = SHA-256 of the content');
  t.deepEqual(await store.stat('rig-1/a.db'), info, 'stat agrees');
  t.ok((await content('rig-1/a.db')).equals(body), 'content');
  t.ok(progress.length >= 2 && progress.at(-1) === body.length, `progress reported (${progress.join(', ')})`);
  t.ok(progress.every((n, i) => i === 0 || n > progress[i - 1]!), 'progress grows');
  t.deepEqual(tempFiles(), [], 'no temp file left');
});

test('too long: aborted as soon as the excess arrives, nothing visible', async (t) => {
  const src = counted(10 * 1024 * 1024);
  const err = await caught(() => store.putObject('rig-1/long.db', src.stream, { expectedSize: 1000 }));
  t.ok(err instanceof S3Error, 'S3Error');
  t.equal((err as S3Error).s3Code, 'EntityTooLarge', 'EntityTooLarge');
  t.equal(err?.kind, 'too_large', 'kind too_large');
  t.ok(src.pulled() < 1024 * 1024, `stopped reading early (${src.pulled()} of ${10 * 1024 * 1024} bytes pulled)`);
  t.ok(src.stream.destroyed, 'source stream destroyed (the upload connection can be closed)');
  t.equal(await store.stat('rig-1/long.db'), null, 'nothing visible');
  t.deepEqual(tempFiles(), [], 'no temp file left');
});

test('too short: refused, nothing visible', async (t) => {
  const err = await caught(() => store.putObject('rig-1/short.db', Readable.from([Buffer.alloc(999)]), { expectedSize: 1000 }));
  t.equal((err as S3Error | null)?.s3Code, 'IncompleteBody', 'IncompleteBody');
  t.equal(await store.stat('rig-1/short.db'), null, 'nothing visible');
  t.equal((await caught(() => store.read('rig-1/short.db')))?.kind, 'not_found', 'read: not found');
  t.deepEqual(tempFiles(), [], 'no temp file left');
  const none = await caught(() => store.putObject('rig-1/none.db', Readable.from([]), { expectedSize: 1 }));
  t.equal((none as S3Error | null)?.s3Code, 'IncompleteBody', 'an empty body for 1 byte is refused too');
});

test('a source that fails midway (client gone): refused, nothing visible', async (t) => {
  let sent = 0;
  const src = new Readable({
    read() {
      if (sent >= 3) return void this.destroy(new Error('socket hang up'));
      sent++;
      this.push(Buffer.alloc(1000));
    },
  });
  const err = await caught(() => store.putObject('rig-1/cut.db', src, { expectedSize: 10_000 }));
  t.equal((err as S3Error | null)?.s3Code, 'IncompleteBody', 'IncompleteBody');
  t.equal(await store.stat('rig-1/cut.db'), null, 'nothing visible');
  t.deepEqual(tempFiles(), [], 'no temp file left');
});

test('an existing object survives failed overwrites', async (t) => {
  const v1 = Buffer.from('version one');
  await store.putObject('rig-1/keep.db', Readable.from([v1]), { expectedSize: v1.length });
  const before = await store.stat('rig-1/keep.db');
  const filesBefore = files();
  const long = await caught(() => store.putObject('rig-1/keep.db', Readable.from([Buffer.from('version two, longer')]), { expectedSize: v1.length }));
  const short = await caught(() => store.putObject('rig-1/keep.db', Readable.from([Buffer.from('v2')]), { expectedSize: v1.length }));
  t.deepEqual([(long as S3Error).s3Code, (short as S3Error).s3Code], ['EntityTooLarge', 'IncompleteBody'], 'both refused');
  t.deepEqual(await store.stat('rig-1/keep.db'), before, 'stat unchanged');
  t.ok((await content('rig-1/keep.db')).equals(v1), 'content unchanged');
  t.deepEqual(files(), filesBefore, 'no file added or removed');
});

test('a successful overwrite replaces the object and leaves one data file', async (t) => {
  const v2 = Buffer.from('version two');
  await store.putObject('rig-1/keep.db', Readable.from([v2]), { expectedSize: v2.length });
  t.ok((await content('rig-1/keep.db')).equals(v2), 'new content');
  t.equal((await store.stat('rig-1/keep.db'))?.etag, sha256(v2), 'new etag');
  const dataFiles = files().filter((f) => f.endsWith('.data'));
  t.equal(dataFiles.length, 2, 'one data file per object (a.db, keep.db): the old version is gone');
});

test('a reader keeps the version it opened while an overwrite lands', async (t) => {
  const old = Buffer.alloc(1024 * 1024, 0x31);
  await store.putObject('rig-1/swap.db', Readable.from([old]), { expectedSize: old.length });
  const reading = await store.read('rig-1/swap.db');
  const neu = Buffer.alloc(1024 * 1024, 0x32);
  await store.putObject('rig-1/swap.db', Readable.from([neu]), { expectedSize: neu.length });
  const parts: Buffer[] = [];
  for await (const c of reading) parts.push(c as Buffer);
  t.ok(Buffer.concat(parts).equals(old), 'the open stream reads the old version whole');
  t.ok((await content('rig-1/swap.db')).equals(neu), 'a new read sees the new version');
});

test('concurrent PUTs of one key: one wins whole, no stray files', async (t) => {
  const bodies = Array.from({ length: 8 }, (_, i) => Buffer.alloc(100_000 + i, 0x41 + i));
  await Promise.all(bodies.map((b) => store.putObject('rig-1/race.db', Readable.from([b.subarray(0, 50_000), b.subarray(50_000)]), { expectedSize: b.length })));
  const got = await content('rig-1/race.db');
  const winner = bodies.find((b) => b.equals(got));
  t.ok(winner, 'content is exactly one of the uploads');
  t.equal((await store.stat('rig-1/race.db'))?.etag, winner && sha256(winner), 'stat matches that content');
  const hash = files().find((f) => f.endsWith('.json') && !f.startsWith('.tmp'));
  t.ok(hash, 'sidecars exist');
  t.deepEqual(tempFiles(), [], 'no temp file left');
  const dataFiles = files().filter((f) => f.endsWith('.data'));
  t.equal(dataFiles.length, 4, 'still one data file per object (a, keep, swap, race)');
});

test('keys that would clash as paths: "k", "k/k", long segments', async (t) => {
  const keys = ['k', 'k/k', 'k/k/k', `${'z'.repeat(300)}/${'z'.repeat(300)}`, 'K'];
  for (const key of keys) await store.putObject(key, Readable.from([Buffer.from(key)]), { expectedSize: Buffer.byteLength(key) });
  for (const key of keys) t.equal((await content(key)).toString(), key, `read ${key.slice(0, 12)}`);
});

test('bad arguments', async (t) => {
  t.equal((await caught(() => store.putObject('a/../b', Readable.from([]), { expectedSize: 0 })))?.kind, 'invalid', 'invalid key');
  t.equal((await caught(() => store.putObject('ok', Readable.from([]), { expectedSize: -1 })))?.kind, 'invalid', 'negative size');
  t.equal((await caught(() => store.putObject('ok', Readable.from([]), { expectedSize: 1.5 })))?.kind, 'invalid', 'fractional size');
  t.deepEqual(tempFiles(), [], 'no temp file left');
});
