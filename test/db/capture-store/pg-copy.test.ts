// Rows into the PostgreSQL store by COPY FROM STDIN: COPY's text format escaped exactly (backslashes,
// tabs, newlines, carriage returns, "\." and "\N" as text), values keeping their class and bytes
// through the store (NUL-carrying text, large blobs, numeric-looking text with leading zeros, -0.0,
// integers at and past 2^53 and 2^63), tables switched between batches, and a COPY the server refuses
// rolled back with the capture's earlier rows intact and the connection usable afterwards; each
// field equal to the store's value text (pg-values.ts) escaped for COPY, over thousands of values.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import test from 'tape';
import type { RowBatch, StoreTable } from '../../../src/db/capture-store/index.ts';
import { copyField, copyLines, copyPieces } from '../../../src/db/capture-store/pg-copy.ts';
import { encodeValue } from '../../../src/db/capture-store/pg-values.ts';
import { countRows, openTestReader, openTestStore } from '../../helpers/capture-store.ts';
import { postgresOnly } from '../../helpers/dialect.ts';
import { tmpDir } from '../../helpers/tmp.ts';

const dataDir = path.join(tmpDir('rigd-pg-copy-'), 'data');

async function* batches(...list: RowBatch[]): AsyncGenerator<RowBatch> {
  for (const b of list) yield b;
}

test("COPY's text format: the jsonb text of each value, escaped; NULL as \\N", (t) => {
  t.equal(copyField(null), '\\N', 'NULL');
  t.equal(copyField('a\\b', 't'), '"a\\\\\\\\b"', 'a backslash: JSON doubles it, COPY doubles each again');
  t.equal(copyField('\\N', 't'), '"\\\\\\\\N"', 'the text \\N is not NULL');
  t.equal(copyField('tab\there', 't'), '"tab\\\\there"', 'a tab: JSON escapes it as \\t, COPY keeps the backslash');
  t.equal(copyField('0012', 't'), '"0012"', 'numeric-looking text stays a string');
  t.equal(copyField('9223372036854775808', 'i'), '9223372036854775808', 'an integer past 2^63 as its digits');
  t.equal(copyField(-0, 'r'), '{"real":"-0"}', '-0.0 keeps its sign');
  t.equal(copyField('x\u0000y', 't'), '{"text":"eAB5"}', 'text with NUL as base64 inside the jsonb (no NUL byte sent)');
  t.equal(copyLines(7, [[1, 'a'], [null, 'b\nc']], 2, ['it', 'nt'], 'x'), '7\t1\t"a"\n7\t\\N\t"b\\\\nc"\n', 'lines: capture id first, tab-separated, newline-ended');
  t.throws(() => copyLines(7, [[1]], 2, undefined, 'x'), /a row of x has 1 values, not 2/, 'a row of the wrong width is refused');
  const many = Array.from({ length: 5000 }, (_, i) => [i, `row ${i}\t`]);
  const pieces = copyPieces(3, many, 2, undefined, 'x');
  t.equal(pieces.join(''), copyLines(3, many, 2, undefined, 'x'), 'a batch in pieces is the same text');
  t.ok(pieces.length > 1 && pieces.every((p) => p.endsWith('\n') && p.length < 70 * 1024), `in ${pieces.length} pieces of whole lines, each about 64 Ki characters at most`);
  t.end();
});

test("a field is encodeValue's jsonb text escaped for COPY, for every class and kind of value", (t) => {
  // The reference: the store's value text (pg-values.ts), then COPY's escapes, character by character.
  const reference = (v: unknown, cls?: string): string => {
    const text = encodeValue(v, cls);
    return text === null ? '\\N' : text.replace(/[\\\n\r\t]/g, (c) => ({ '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' })[c]!);
  };
  const numbers = [0, -0, 1, -7, 0.25, 1e-7, 5e-324, 1e20, 1e21, -1.2345e25, 2 ** 53, 2 ** 53 + 2, Number.MAX_VALUE, Infinity, -Infinity, NaN];
  const texts = ['', 'a', 'a\\b', '\\N', '\\.', 'tab\there', 'nl\nx\r', '"q"', '0012', '-12', '9223372036854775808', '1.5', '12abc', 'x\u0000y', '\ud800', '\u00e9\u4e2d\ud83d\ude00', '\u0001\u001f'];
  const values: unknown[] = [...numbers, ...texts, null, undefined, Buffer.from([0, 1, 255]), new Uint8Array([9, 8]), 10n ** 30n];
  for (let i = 0; i < 2000; i++) {
    const x = (Math.random() - 0.5) * 10 ** Math.floor(Math.random() * 44 - 12);
    values.push(x, Math.round(x), String.fromCharCode(...Array.from({ length: i % 9 }, () => Math.floor(Math.random() * (i % 2 ? 0x80 : 0x10000)))));
  }
  let differ = 0;
  let first = '';
  for (const v of values) {
    for (const cls of [undefined, 'n', 'i', 'r', 't', 'b']) {
      if (copyField(v, cls) === reference(v, cls)) continue;
      differ++;
      first ||= `${JSON.stringify(String(v))} as ${cls}: ${copyField(v, cls)} vs ${reference(v, cls)}`;
    }
  }
  t.deepEqual(
    [3, 0.25, 1e-7, 1e20, 1e21, -1.5e25, Infinity].map((x) => copyField(x, 'r')),
    ['3.0', '0.25', '1e-7', '100000000000000000000.0', '1000000000000000000000.0', '-15000000000000000285212672.0', '{"real":"Infinity"}'],
    'a real keeps its point: whole ones with .0 (in full digits from 1e21 on), others in their shortest form',
  );
  t.equal(differ, 0, `${values.length * 6} values and classes give the reference's field${first ? ` (first difference: ${first})` : ''}`);
  t.end();
});

const tricky: StoreTable = { name: 'tricky', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'v', type: '' }] };
const other: StoreTable = { name: 'other', columns: [{ name: 'b', type: 'BLOB' }] };

test('values through COPY come back with their class and bytes; tables switched between batches', async (t) => {
  if (postgresOnly(t, 'the PostgreSQL store')) return;
  const big = randomBytes(3 * 1024 * 1024);
  const values: [unknown, string][] = [
    ['back\\slash \\\\ end\\', 't'],
    ['tab\tnew\nline\rcr', 't'],
    ['\\.', 't'],
    ['\\N', 't'],
    ['nul\u0000inside\u0000', 't'],
    ['0012', 't'],
    ['-0', 't'],
    ['1e3', 't'],
    ['', 't'],
    ['{"json":"\\u0041"}', 't'],
    ['ünïcødé ✓ 𝄞', 't'],
    [-0, 'r'],
    [0.1, 'r'],
    [1e300, 'r'],
    [Number.POSITIVE_INFINITY, 'r'],
    ['9007199254740993', 'i'],
    ['9223372036854775807', 'i'],
    ['-9223372036854775808', 'i'],
    [-42, 'i'],
    [Buffer.from('a\tb\\c\nd\u0000'), 'b'],
    [big, 'b'],
    [Buffer.alloc(0), 'b'],
    [null, 'n'],
  ];
  const rows = values.map(([v], i) => [i, v]);
  const classes = values.map(([, c]) => `i${c}`);
  const store = await openTestStore(dataDir);
  const res = await store.replace(
    1,
    [tricky, other],
    batches(
      { table: 'tricky', rows: rows.slice(0, 10), classes: classes.slice(0, 10), bytes: 1 },
      { table: 'other', rows: [[Buffer.from('x')]], classes: ['b'], bytes: 1 },
      { table: 'tricky', rows: rows.slice(10), classes: classes.slice(10), bytes: 1 },
      { table: 'other', rows: [[null]], classes: ['n'], bytes: 1 },
    ),
  );
  t.deepEqual([...res.rows].sort(), [['other', 2], ['tricky', values.length]], 'rows per table, whatever the order of batches');
  const reader = (await openTestReader(dataDir))!;
  const got: unknown[][] = [];
  for await (const r of reader.rows('tricky', ['id', 'v'], 1)) got.push(r);
  t.equal(got.length, values.length, 'every row');
  for (let i = 0; i < values.length; i++) {
    const [v, c] = values[i]!;
    const back = got[i]![1];
    const same = Buffer.isBuffer(v) ? Buffer.isBuffer(back) && v.equals(back) : Object.is(back, v);
    t.ok(same, `${c} ${Buffer.isBuffer(v) ? `blob of ${v.length} bytes` : JSON.stringify(String(Object.is(v, -0) ? '-0.0' : v))}: back exactly (${Buffer.isBuffer(back) ? `blob of ${back.length}` : JSON.stringify(back)})`);
  }
  const others: unknown[][] = [];
  for await (const r of reader.rows('other', ['b'], 1)) others.push(r);
  t.deepEqual(others, [[Buffer.from('x')], [null]], 'the other table, in its order');
  await reader.close();
  await store.close();
});

test('a COPY the server refuses: rolled back, the earlier rows intact, the connection usable', async (t) => {
  if (postgresOnly(t, 'the PostgreSQL store')) return;
  const store = await openTestStore(dataDir);
  const before = await countRows(dataDir, 'tricky', 1);
  // A lone surrogate: JSON.stringify writes it as \ud800, which jsonb refuses.
  const err = await store
    .replace(1, [tricky], batches({ table: 'tricky', rows: [[1, 'fine']], classes: ['it'], bytes: 1 }, { table: 'tricky', rows: [[2, 'bad \ud800']], classes: ['it'], bytes: 1 }))
    .catch((e: Error) => e);
  t.ok(err instanceof Error, 'the import fails');
  t.match((err as Error).message, /^capture store table tricky: .*(json|Unicode)/i, `the message names the table and the server's reason: ${(err as Error).message}`);
  t.equal(await countRows(dataDir, 'tricky', 1), before, "capture 1's earlier rows as they were");
  const res = await store.replace(2, [tricky], batches({ table: 'tricky', rows: [[1, 'after']], classes: ['it'], bytes: 1 }));
  t.deepEqual([...res.rows], [['tricky', 1]], 'the next import on the same connection works');
  t.equal(await countRows(dataDir, 'tricky', 2), 1, 'and is stored');
  await store.close();
});
