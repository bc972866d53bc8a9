// test: alone (bounded memory; mounts a ramfs)
// The embedded store's object files, written by worker threads: exact bytes across slab and block
// boundaries, O_DIRECT where the filesystem takes it (ext4 here) and the page cache where it does not
// (ramfs), many files at once, bounded memory (write() makes the caller wait), abort removes the file.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { EmbeddedStorage } from '../../src/storage/embedded.ts';
import { SLAB_BYTES, SLABS_PER_WORKER } from '../../src/storage/object-file-protocol.ts';
import { ObjectFileWriter } from '../../src/storage/object-file-writer.ts';
import { tempDir, testConfig } from '../helpers/storage.ts';
import { Readable } from 'node:stream';

const tmp = tempDir();
test.onFinish(() => tmp.cleanup());
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
let n = 0;

/** Writes `body` in pieces of `piece` bytes, awaiting whenever the writer asks to; counts the waits. */
async function writeFile(dir: string, body: Buffer, piece: number) {
  const file = path.join(dir, `f${n++}.part`);
  const writer = await ObjectFileWriter.create(file);
  let waits = 0;
  for (let at = 0; at < body.length; at += piece) {
    const pending = writer.write(body.subarray(at, at + piece));
    if (pending) {
      waits++;
      await pending;
    }
  }
  const written = await writer.finish();
  return { file, written, waits, direct: writer.direct };
}

const sizes = [0, 1, 4095, 4096, 4097, SLAB_BYTES - 1, SLAB_BYTES, SLAB_BYTES + 1, 3 * SLAB_BYTES + 123];

test('every size comes back byte for byte, with O_DIRECT on this filesystem', async (t) => {
  for (const size of sizes) {
    const body = randomBytes(size);
    const { file, written, direct } = await writeFile(tmp.dir, body, 65536 + 7);
    t.ok(direct, `${size} bytes: written with O_DIRECT`);
    t.equal(statSync(file).size, size, `${size} bytes: file size exact (padding cut off)`);
    t.ok(readFileSync(file).equals(body), `${size} bytes: same content`);
    t.deepEqual([written.size, written.sha256], [size, sha256(body)], `${size} bytes: size and SHA-256 reported`);
  }
});

test('on ramfs (no O_DIRECT) the page cache is used, with the same result', async (t) => {
  const mnt = path.join(tmp.dir, 'ramfs');
  mkdirSync(mnt);
  try {
    execFileSync('mount', ['-t', 'ramfs', 'ramfs', mnt]);
  } catch (err) {
    // The suite runs as root (network namespaces need it too): no mount means a broken test host.
    t.fail(`cannot mount a ramfs: ${String(err).split('\n')[0]}`);
    return;
  }
  try {
    for (const size of [0, 4097, 2 * SLAB_BYTES + 5]) {
      const body = randomBytes(size);
      const { file, written, direct } = await writeFile(mnt, body, 50_000);
      t.notOk(direct, `${size} bytes: buffered on ramfs`);
      t.ok(readFileSync(file).equals(body), `${size} bytes: same content`);
      t.equal(written.sha256, sha256(body), `${size} bytes: SHA-256`);
    }
    // The whole store on ramfs: a PUT goes through, and reads back.
    const store = new EmbeddedStorage(testConfig({ data_dir: path.join(mnt, 'data') }));
    await store.ensureBucket();
    const body = randomBytes(SLAB_BYTES + 99);
    const info = await store.putObject('rig/on-ramfs.db', Readable.from([body]), { expectedSize: body.length });
    t.equal(info.etag, sha256(body), 'store on ramfs: etag');
    const parts: Buffer[] = [];
    for await (const c of await store.read('rig/on-ramfs.db')) parts.push(c as Buffer);
    t.ok(Buffer.concat(parts).equals(body), 'store on ramfs: reads back');
  } finally {
    execFileSync('umount', [mnt]);
  }
});

test('the writer holds a bounded number of slabs: a large file makes the caller wait', async (t) => {
  const body = randomBytes(4 * SLABS_PER_WORKER * SLAB_BYTES);
  const { written, waits } = await writeFile(tmp.dir, body, SLAB_BYTES);
  t.equal(written.sha256, sha256(body), 'content hashed whole');
  t.ok(waits > 0, `write() asked the caller to wait ${waits} times (memory stays at ${SLABS_PER_WORKER} slabs)`);
});

test('many files at once (more than workers and slabs) each come out whole', async (t) => {
  const bodies = Array.from({ length: 7 }, (_, i) => randomBytes(2 * SLAB_BYTES + i * 1000));
  const results = await Promise.all(bodies.map((b, i) => writeFile(tmp.dir, b, 30_000 + i)));
  results.forEach((r, i) => {
    t.ok(readFileSync(r.file).equals(bodies[i]!), `file ${i}: same content`);
    t.equal(r.written.sha256, sha256(bodies[i]!), `file ${i}: its own SHA-256`);
  });
});

test('writers whose source went quiet do not hold slabs: a new file goes through, the quiet ones finish whole', async (t) => {
  // More quiet files than there are slabs in the whole pool (at most 4 workers of SLABS_PER_WORKER):
  // each wrote a few bytes, then nothing. Without parking, the new file waits for ever.
  const quiet = await Promise.all(Array.from({ length: 4 * SLABS_PER_WORKER + 3 }, (_, i) => ObjectFileWriter.create(path.join(tmp.dir, `quiet${i}.part`))));
  const heads = quiet.map((_, i) => randomBytes(5000 + i * 10));
  for (const [i, w] of quiet.entries()) await w.write(heads[i]!);
  const body = randomBytes(3 * SLAB_BYTES + 17);
  const busy = await Promise.race([
    writeFile(tmp.dir, body, 65536),
    new Promise<null>((resolve) => setTimeout(() => resolve(null), 60_000).unref()),
  ]);
  t.ok(busy, 'a new file is written while the quiet ones still hold their first bytes');
  if (busy) t.ok(readFileSync(busy.file).equals(body), 'and comes out whole');
  // The quiet ones wake up: their parked bytes come first, then the rest, still with O_DIRECT.
  const tails = quiet.map(() => randomBytes(SLAB_BYTES + 3));
  const results = await Promise.all(
    quiet.map(async (w, i) => {
      await w.write(tails[i]!);
      return { direct: w.direct, written: await w.finish() };
    }),
  );
  results.forEach((r, i) => {
    const whole = Buffer.concat([heads[i]!, tails[i]!]);
    const file = path.join(tmp.dir, `quiet${i}.part`);
    t.ok(readFileSync(file).equals(whole) && r.written.sha256 === sha256(whole), `quiet file ${i}: same content and SHA-256`);
    t.ok(r.direct, `quiet file ${i}: O_DIRECT kept`);
  });
});

test('more writers than slabs, pausing and finishing at random: every file comes out whole', async (t) => {
  // Slabs get parked and taken back all the time here, including while files finish.
  let seed = 7;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
  const bodies = Array.from({ length: 4 * SLABS_PER_WORKER + 10 }, (_, i) => randomBytes(200_000 + i * 3001));
  const results = await Promise.all(
    bodies.map(async (body, i) => {
      const file = path.join(tmp.dir, `busy${i}.part`);
      const w = await ObjectFileWriter.create(file);
      for (let at = 0; at < body.length; ) {
        const n = 1 + rand(40_000);
        await w.write(body.subarray(at, at + n));
        at += n;
        if (rand(3) === 0) await new Promise((r) => setTimeout(r, rand(5)));
        else await new Promise((r) => setImmediate(r));
      }
      return { file, written: await w.finish() };
    }),
  );
  const bad = results.filter((r, i) => !readFileSync(r.file).equals(bodies[i]!) || r.written.sha256 !== sha256(bodies[i]!));
  t.equal(bad.length, 0, `${results.length} files: same content and SHA-256 (${bad.length} differ)`);
});

test('abort removes the file', async (t) => {
  const file = path.join(tmp.dir, 'aborted.part');
  const writer = await ObjectFileWriter.create(file);
  await writer.write(randomBytes(3 * SLAB_BYTES));
  t.ok(existsSync(file), 'file exists while being written');
  await writer.abort();
  t.notOk(existsSync(file), 'gone after abort');
});

test('a file that exists already is refused, and the error says why', async (t) => {
  const { file } = await writeFile(tmp.dir, Buffer.from('x'), 1);
  const err = await ObjectFileWriter.create(file).then(
    () => null,
    (e: Error & { code?: string }) => e,
  );
  t.equal(err?.code, 'EEXIST', 'EEXIST');
  t.equal(readFileSync(file, 'utf8'), 'x', 'the existing file is untouched');
});
