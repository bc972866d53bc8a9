// Exports read the capture store a bounded page at a time: large blobs and texts come out in pieces
// yet byte for byte as stored (CSV and NDJSON), pages are bounded by bytes as well as rows, a page
// is read only when the consumer took the previous one, and a stream destroyed mid-way releases its
// store handle at once.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import test from 'tape';
import { openTablePages, type PageOptions, type TablePages } from '../../../src/db/capture-store/pages.ts';
import { ExportStream } from '../../../src/services/captures/export-stream.ts';
import { exportTable } from '../../../src/services/captures/export.ts';
import { settledStoreHandles, storeHandles } from '../../helpers/capture-store.ts';
import { databaseUrlFor, onPostgres } from '../../helpers/dialect.ts';
import { waitFor } from '../../helpers/jobs.ts';
import { seedCapture, type SeedTable } from '../../helpers/seed-capture.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { tmpDir } from '../../helpers/tmp.ts';

const files = tmpDir();
const BLOB = Buffer.alloc(3 * 1024 * 1024 + 7);
for (let i = 0; i < BLOB.length; i++) BLOB[i] = (i * 31 + (i >> 8)) & 0xff;
// Quotes, commas, line breaks and characters outside the BMP, across piece boundaries.
const TEXT = Array.from({ length: 40_000 }, (_, i) => (i % 7 === 0 ? '"é,\n😀' : `w${i}`)).join(' ');
const big: SeedTable = {
  name: 'big',
  columns: [
    { name: 'i', type: 'INTEGER' },
    { name: 'img', type: 'BLOB' },
    { name: 'note', type: 'TEXT' },
  ],
  rows: [
    [1, BLOB, TEXT],
    [2, Buffer.from('small'), 'plain'],
    [3, null, null],
  ],
};
// Values of several MiB: PostgreSQL reads a large value in parts of 1 MiB. 'aé😀' is 7 bytes, so the
// parts' boundaries (multiples of 1 MiB) fall inside characters; a text holding NUL is kept as base64.
const LONG = 'aé😀'.repeat(400_000);
const NUL_LONG = `x\u0000${'ü'.repeat(700_000)}`;
const parts: SeedTable = { name: 'parts', columns: [{ name: 'i', type: 'INTEGER' }, { name: 'long', type: 'TEXT' }, { name: 'nul', type: 'TEXT' }], rows: [[1, LONG, NUL_LONG]] };
const many: SeedTable = { name: 'many', columns: [{ name: 'i', type: 'INTEGER' }, { name: 's', type: 'TEXT' }], rows: Array.from({ length: 5000 }, (_, i) => [i, 'x'.repeat(100)]) };
const PAGING: PageOptions = { pageRows: 256, pageBytes: 65_536, largeBytes: 16_384 };

let s: TestServer;
let id = 0;
const url = () => databaseUrlFor(s.config.data_dir);

async function text(stream: NodeJS.ReadableStream): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += chunk;
  return out;
}

const csvText = (v: string) => `"${v.replaceAll('"', '""')}"`;

test('setup: a capture with a 3 MiB blob, a long text and a 5,000-row table', async (t) => {
  s = await startServer();
  id = await seedCapture(s.app, files, 'rig1/big.sqlite', [big, many, parts]);
  t.ok(id > 0);
});

test('large values come out in pieces, byte for byte (CSV and NDJSON)', async (t) => {
  const csv = await exportTable(s.app.captures, s.config.data_dir, id, 'big', 'csv', url(), { pageBytes: 65_536 });
  t.equal(await text(csv.stream), `i,img,note\r\n1,${BLOB.toString('base64')},${csvText(TEXT)}\r\n2,${Buffer.from('small').toString('base64')},plain\r\n3,,\r\n`, 'CSV');
  const nd = await exportTable(s.app.captures, s.config.data_dir, id, 'big', 'ndjson', url(), { pageBytes: 65_536 });
  const lines = (await text(nd.stream)).trimEnd().split('\n').map((l) => JSON.parse(l));
  t.deepEqual(lines, [
    { i: 1, img: BLOB.toString('base64'), note: TEXT },
    { i: 2, img: Buffer.from('small').toString('base64'), note: 'plain' },
    { i: 3, img: null, note: null },
  ], 'NDJSON');
});

test('values of several MiB come out exactly, read a bounded part at a time', async (t) => {
  const csv = await exportTable(s.app.captures, s.config.data_dir, id, 'parts', 'csv', url(), { pageBytes: 65_536 });
  const got = await text(csv.stream);
  t.ok(got === `i,long,nul\r\n1,${csvText(LONG)},${csvText(NUL_LONG)}\r\n`, `CSV of a ${(Buffer.byteLength(LONG) / 1024 ** 2).toFixed(1)} MiB text and a text holding NUL, exact (${got.length} characters)`);
  const nd = await exportTable(s.app.captures, s.config.data_dir, id, 'parts', 'ndjson', url(), { pageBytes: 65_536 });
  t.deepEqual(JSON.parse(await text(nd.stream)), { i: 1, long: LONG, nul: NUL_LONG }, 'NDJSON, exact');
  // What the store hands over at once for one large value: a part, never the whole value.
  const pages = (await openTablePages(s.config.data_dir, url(), 'big', ['i', 'img', 'note'], id, PAGING))!;
  const pieces: number[] = [];
  try {
    const img = (await pages.next())![0]![1]!;
    for await (const piece of pages.large(img as Parameters<TablePages['large']>[0])) pieces.push(Buffer.byteLength(piece));
  } finally {
    await pages.close();
  }
  // SQLite hands over a blob's bytes, PostgreSQL the base64 text it keeps.
  t.equal(pieces.reduce((a, b) => a + b, 0), onPostgres ? BLOB.toString('base64').length : BLOB.length, 'the whole value');
  t.ok(pieces.length > 1 && Math.max(...pieces) <= 1024 ** 2, `the 3 MiB blob came in ${pieces.length} pieces of at most ${Math.max(...pieces)} bytes (1 MiB at most)`);
});

test('pages are bounded by bytes as well as rows; large values are not in them', async (t) => {
  const pages = (await openTablePages(s.config.data_dir, url(), 'many', ['i', 's'], id, { ...PAGING, pageBytes: 16_384 }))!;
  const sizes: number[] = [];
  for (let p = await pages.next(); p; p = await pages.next()) sizes.push(p.length);
  await pages.close();
  t.equal(sizes.reduce((a, b) => a + b, 0), 5000, 'every row');
  const most = Math.max(...sizes);
  t.ok(most < 256 && most * 100 <= 16_384 && most * 100 > 16_384 / 2, `16 KiB of values per page stops a page before pageRows: ${most} rows of about 100 bytes`);
  const rowsBound = (await openTablePages(s.config.data_dir, url(), 'many', ['i', 's'], id, { ...PAGING, pageRows: 50 }))!;
  t.equal((await rowsBound.next())!.length, 50, 'pageRows bounds a page of small rows');
  await rowsBound.close();
  const bigPages = (await openTablePages(s.config.data_dir, url(), 'big', ['i', 'img', 'note'], id, PAGING))!;
  const first = (await bigPages.next())!;
  await bigPages.close();
  t.deepEqual(first.map((r) => r.map((c) => (c !== null && typeof c === 'object' && !Buffer.isBuffer(c) ? 'large' : typeof c))), [
    ['number', 'large', 'large'],
    ['number', 'object', 'string'],
    ['number', 'object', 'object'],
  ], 'the 3 MiB blob and the long text are named, not read; small values are there');
});

test('backpressure: a page is read only when the consumer took the previous one', async (t) => {
  const real = (await openTablePages(s.config.data_dir, url(), 'many', ['i', 's'], id, PAGING))!;
  let reads = 0;
  const counted: TablePages = { next: () => (reads++, real.next()), large: (v) => real.large(v), close: () => real.close() };
  const stream = new ExportStream(counted, ['i', 's'], 'csv');
  const first = await new Promise<string>((resolve) => stream.once('data', (c) => (stream.pause(), resolve(String(c)))));
  t.match(first, /^i,s\r\n0,x+\r\n/, 'the first piece');
  await new Promise((r) => setTimeout(r, 300));
  // Held while paused: the text of the page being read and the stream's 16 KiB buffer, a page or two of 27 KB.
  t.ok(reads <= 7, `paused after the first piece: ${reads} page(s) read`);
  stream.resume();
  await text(stream);
  t.ok(reads >= 20, `read to the end: ${reads} pages`);
});

test('a paused export holds the bytes made for its client, not the rows of its pages', async (t) => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const real = (await openTablePages(s.config.data_dir, url(), 'many', ['i', 's'], id, PAGING))!;
  const read: WeakRef<object>[] = [];
  const watched: TablePages = {
    next: async () => {
      const page = await real.next();
      if (page) read.push(new WeakRef(page));
      return page;
    },
    large: (v) => real.large(v),
    close: () => real.close(),
  };
  const stream = new ExportStream(watched, ['i', 's'], 'csv');
  await new Promise<void>((resolve) => stream.once('data', () => (stream.pause(), resolve())));
  await new Promise((r) => setTimeout(r, 100));
  gc();
  await new Promise((r) => setImmediate(r));
  gc();
  t.ok(read.length >= 1, `${read.length} page(s) read before the client paused`);
  t.deepEqual(read.map((r) => (r.deref() ? 'held' : 'gone')), read.map(() => 'gone'), 'no page of rows is held while the client does not read');
  stream.destroy();
});

test('a stream destroyed mid-way releases its store handle at once', async (t) => {
  const before = await settledStoreHandles(s.config.data_dir);
  let closed = 0;
  const out = await exportTable(s.app.captures, s.config.data_dir, id, 'big', 'csv', url(), { pageBytes: 65_536, onClose: () => closed++ });
  // Paused at its first piece (a stream left flowing could finish before the handles are counted).
  await new Promise<void>((resolve) => out.stream.once('data', () => (out.stream.pause(), resolve())));
  t.ok((await storeHandles(s.config.data_dir)) > before, 'a handle while it runs');
  out.stream.destroy();
  await waitFor(async () => ((await storeHandles(s.config.data_dir)) === before ? true : null), 60_000, 'the handle to close');
  t.equal(closed, 1, 'onClose once');
  t.pass('no handle left');
});

test('teardown', async () => {
  await s.close();
});
