// How a batch of rows travels from the capture child to rigd: encoded into a reused buffer, decoded
// back to the same values, blobs as views of the frame; a malformed frame is refused.
import test from 'tape';
import { decodeFrame, FrameWriter } from '../../src/ingest/batch-frame.ts';

const rows = [
  [1, 'sensor-1', 0.25, null, Buffer.from([0xca, 0xfe])],
  [-9007199254740991, '', -0.5, 1e300, Buffer.alloc(0)],
  [0, 'ünïcødé ✓ 𝄞', Number.NaN, '18446744073709551615', Buffer.alloc(70_000, 7)],
];

test('rows come back as they went: numbers, text, NULLs, blobs', (t) => {
  const w = new FrameWriter(16);
  const frame = Buffer.from(w.encode(rows));
  const back = decodeFrame(frame, rows.length, 5);
  t.equal(back.length, 3, 'three rows');
  for (let r = 0; r < rows.length; r++) {
    for (let c = 0; c < 5; c++) {
      const want = rows[r]![c];
      const got = back[r]![c];
      if (Buffer.isBuffer(want)) t.ok(Buffer.isBuffer(got) && want.equals(got), `row ${r} column ${c}: the same blob`);
      else if (typeof want === 'number' && Number.isNaN(want)) t.ok(Number.isNaN(got), `row ${r} column ${c}: NaN`);
      else t.equal(got, want, `row ${r} column ${c}: ${String(want).slice(0, 20)}`);
    }
  }
  t.equal(decodeFrame(Buffer.from(w.encode([[null]])), 1, 1)[0]![0], null, 'a NULL alone');
  t.end();
});

test('blobs are views of the frame, not copies; the writer reuses its buffer', (t) => {
  const w = new FrameWriter(1 << 20);
  const first = w.encode([[Buffer.alloc(10, 1)]]);
  const frame = Buffer.from(first);
  const [[blob]] = decodeFrame(frame, 1, 1) as [[Buffer]];
  t.equal(blob.buffer, frame.buffer, 'the blob shares the frame memory');
  const second = w.encode([[Buffer.alloc(10, 2)]]);
  t.equal(second.buffer, first.buffer, 'the second batch is encoded into the same buffer');
  t.end();
});

test('a malformed frame is refused, never read past its end', (t) => {
  const w = new FrameWriter();
  const good = Buffer.from(w.encode([[1, 'abc', Buffer.from('xyz')]]));
  t.throws(() => decodeFrame(good.subarray(0, good.length - 1), 1, 3), /malformed batch/, 'truncated');
  t.throws(() => decodeFrame(Buffer.concat([good, Buffer.from([0])]), 1, 3), /trailing bytes/, 'trailing bytes');
  t.throws(() => decodeFrame(good, 2, 3), /malformed batch/, 'more rows announced than sent');
  t.throws(() => decodeFrame(good, 1, 2), /trailing bytes/, 'fewer values per row than sent');
  t.throws(() => decodeFrame(Buffer.from([9]), 1, 1), /unknown tag 9/, 'unknown tag');
  t.throws(() => decodeFrame(Buffer.from([2, 0xff, 0xff, 0xff, 0x7f, 0x41]), 1, 1), /past the end/, 'a length past the end');
  t.throws(() => decodeFrame(Buffer.from([0]), 1e12, 1), /rows of 1 values/, 'a row count the frame cannot hold');
  t.throws(() => decodeFrame(Buffer.from([0]), 0, 1), /malformed batch/, 'no rows');
  t.throws(() => w.encode([[{}]]), /cannot be sent/, 'an object cannot be encoded');
  t.end();
});

test("records as the capture reader gives them encode like rows; only the class string's letters are sent", (t) => {
  const fields = ['c0', 'c1', 'c2', 'c3', 'c4', 'cls'];
  // A rowid table's key rides after the letters (pages.ts): it must not reach rigd.
  const classes = ['itrnb9007199254740993', 'itrrb-5', 'itrtb0'];
  const records = rows.map((r, i) => ({ cls: classes[i], c4: r[4], c3: r[3], c2: r[2], c1: r[1], c0: r[0] }));
  const w = new FrameWriter(16);
  const fromRecords = Buffer.from(w.encodeRecords(records, fields, 5));
  const fromRows = Buffer.from(w.encode(rows.map((r, i) => [...r, classes[i]!.slice(0, 5)])));
  t.ok(fromRecords.equals(fromRows), 'the same bytes as the rows with their five letters');
  const back = decodeFrame(fromRecords, 3, 6);
  t.deepEqual(back.map((r) => r[5]), ['itrnb', 'itrrb', 'itrtb'], 'each row ends with its five letters, the key left out');
  t.throws(() => w.encodeRecords([{ c0: 1, cls: '' }], ['c0', 'cls'], 1), /without its classes/, 'a class string shorter than the row is refused');
  t.end();
});
