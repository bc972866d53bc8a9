// test: alone (memory growth bound)
// A 200 MB upload to the embedded store is streamed: the process's memory stays flat (loosely: < 64 MB growth).
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import test from 'tape';
import { EmbeddedStorage } from '../../src/storage/embedded.ts';
import { tempDir, testConfig } from '../helpers/storage.ts';

const SIZE = 200 * 1024 * 1024;
const CHUNK = 64 * 1024;

test('200 MB putObject and read keep RSS growth under 64 MB', async (t) => {
  const tmp = tempDir();
  try {
    const store = new EmbeddedStorage(testConfig({ data_dir: tmp.dir }));
    await store.ensureBucket();
    // Chunks come from a ring of buffers, each refilled (with varying bytes) before it is used again:
    // the store must copy what it keeps past a chunk's event (a kept reference would break the hash),
    // and garbage made by this test's source does not count as the store's memory. Fresh buffers from
    // a real socket: test/server/uploads.test.ts.
    const ring = Array.from({ length: 32 }, () => Buffer.alloc(CHUNK));
    let produced = 0;
    const expected = createHash('sha256');
    const source = new Readable({
      highWaterMark: CHUNK,
      read() {
        if (produced >= SIZE) return void this.push(null);
        const buf = ring[(produced / CHUNK) % ring.length]!.fill((produced / CHUNK) & 0xff);
        expected.update(buf);
        produced += CHUNK;
        this.push(buf);
      },
    });
    // The first PUT starts the store's writer thread and fills its slabs once: a fixed cost, measured
    // apart from the growth during the large PUT.
    const cold = process.memoryUsage().rss;
    await store.putObject('warm/up.log', Readable.from([Buffer.alloc(16 * 1024 * 1024, 1)]), { expectedSize: 16 * 1024 * 1024 });
    const base = process.memoryUsage().rss;
    t.comment(`writer thread started: RSS +${((base - cold) / 1048576).toFixed(1)} MB`);
    let peak = base;
    const sample = () => {
      peak = Math.max(peak, process.memoryUsage().rss);
    };
    const timer = setInterval(sample, 20);
    let calls = 0;
    const info = await store.putObject('big/capture.sqlite', source, {
      expectedSize: SIZE,
      onProgress: () => {
        if (++calls % 64 === 0) sample();
      },
    });
    sample();
    t.equal(info.size, SIZE, '200 MB stored');
    t.equal(info.etag, expected.digest('hex'), 'etag matches the bytes sent');
    const growthPut = peak - base;
    t.ok(growthPut < 64 * 1024 * 1024, `RSS growth during the PUT: ${(growthPut / 1048576).toFixed(1)} MB`);

    let readBytes = 0;
    const readBase = process.memoryUsage().rss;
    peak = readBase;
    for await (const chunk of await store.read('big/capture.sqlite')) readBytes += (chunk as Buffer).length;
    clearInterval(timer);
    sample();
    t.equal(readBytes, SIZE, 'read back 200 MB');
    t.ok(peak - readBase < 64 * 1024 * 1024, `RSS growth during the read: ${((peak - readBase) / 1048576).toFixed(1)} MB`);
  } finally {
    tmp.cleanup();
  }
});
