// Exports (CSV and NDJSON, as rigd captures export and GET /api/v1/captures/{id}/tables/{table} make
// them) give back each value of the capture store's catalog layout exactly, class and bytes, on both
// engines: two rigs whose software declares one table with other types (leading zeros, numeric-looking
// text, blobs that look like text, reals that look like integers, integers past 2^53), a capture whose
// table went to a table of its own shape, and values large enough to be read on their own. Captures
// are made with the sqlite3 module and ingested by the app's real pipeline.
import path from 'node:path';
import test from 'tape';
import { openApp, type App } from '../../../src/services/app.ts';
import { captureRowCounts, rowsOf } from '../../../src/db/capture-store/row-counts.ts';
import { exportTable } from '../../../src/services/captures/export.ts';
import { putFile, settled } from '../../helpers/captures.ts';
import { storeQuery, sqlCapture } from '../../helpers/capture-store.ts';
import { testConfig } from '../../helpers/server.ts';
import { tmpDir } from '../../helpers/tmp.ts';

const dataDir = tmpDir();
const files = tmpDir();
let app: App;
const ids: Record<string, number> = {};

/** Small pages: values over 16 KiB are read on their own (large values). */
const PAGE_BYTES = 65_536;
const BIG_TEXT = `"${'é,'.repeat(12_000)}"`;
const BIG_BLOB = Buffer.alloc(40_000, 0x41);
const NUL_TAIL = 'ü'.repeat(20_000);

async function ingest(key: string, ...sql: string[]): Promise<void> {
  const file = path.join(files, key.replaceAll('/', '_'));
  await sqlCapture(file, ...sql);
  await putFile(app, key, file);
  const { capture } = await app.captures.queueObject({ key, url: app.storage.objectUrl(key) });
  const done = await settled(app, capture.id, 60_000);
  if (done.state !== 'ingested') throw new Error(`${key} ${done.state}: ${done.last_error}`);
  ids[key] = capture.id;
}

async function exported(key: string, table: string, format: 'csv' | 'ndjson'): Promise<string> {
  const out = await exportTable(app.captures, dataDir, ids[key]!, table, format, app.config.database.url, { pageBytes: PAGE_BYTES });
  let text = '';
  for await (const chunk of out.stream) text += String(chunk);
  return text;
}

test('setup: captures of three rigs, ingested by the app', async (t) => {
  app = await openApp(testConfig({ data_dir: dataDir }));
  await app.start();
  // Rig A's software declares types that convert ('12' NUMERIC is the integer 12).
  await ingest(
    'rig-a/1.sqlite',
    'CREATE TABLE readings (serial NUMERIC, code INTEGER, raw BLOB, note TEXT, x REAL, big INTEGER)',
    "INSERT INTO readings VALUES ('12', '7', x'3132', 'hello', 1, 9007199254740993)",
    "INSERT INTO readings VALUES (12.5, 8, NULL, 'wörld ✓', 2.5, -9223372036854775808)",
  );
  // Rig B (another software version): the same table with other types, and large values.
  await ingest(
    'rig-b/1.sqlite',
    'CREATE TABLE readings (serial TEXT, code TEXT, raw TEXT, note BLOB, x, big TEXT)',
    "INSERT INTO readings VALUES ('0012', '007', '12', x'68656c6c6f', 1.0, '9007199254740993')",
    "INSERT INTO readings VALUES ('12.50', '1e3', '', x'', 1e300, ' 42')",
    "INSERT INTO readings VALUES (NULL, '-0', 'NULL', x'00ff', -2.0, NULL)",
    `INSERT INTO readings VALUES ('${BIG_TEXT}', 'x', 'y', x'${BIG_BLOB.toString('hex')}', 0.1, '1')`,
    // Text holding NUL (PostgreSQL keeps it apart, as base64): one small, one large.
    `INSERT INTO readings VALUES ('x' || char(0) || '${NUL_TAIL}', 'a' || char(0) || 'b', 'z', NULL, 3.0, NULL)`,
  );
  // Rig C: 40 columns no other capture has: its table goes to a table of its own shape.
  const cols = Array.from({ length: 40 }, (_, i) => `c${i}`);
  await ingest('rig-c/1.sqlite', `CREATE TABLE readings (${cols.join(', ')})`, `INSERT INTO readings VALUES (${cols.map((_, i) => (i % 2 ? `'0${i}'` : `${i}.0`)).join(', ')})`);
  t.ok(Object.keys(ids).length === 3, 'three captures ingested');
  const places = await storeQuery<{ physical: string }>(dataDir, 'SELECT physical FROM rigd_capture_tables WHERE capture_id IN (?, ?, ?) ORDER BY capture_id', [ids['rig-a/1.sqlite'], ids['rig-b/1.sqlite'], ids['rig-c/1.sqlite']]);
  t.deepEqual(places.map((p) => p.physical === 'readings'), [true, true, false], 'A and B share the store table readings; C is in a table of its own shape');
});

test('CSV: each rig gets its own values back, class and bytes', async (t) => {
  const b64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');
  t.equal(
    await exported('rig-a/1.sqlite', 'readings', 'csv'),
    'serial,code,raw,note,x,big\r\n' + `12,7,${b64('3132')},hello,1.0,9007199254740993\r\n` + '12.5,8,,wörld ✓,2.5,-9223372036854775808\r\n',
    "rig A: its own conversions (12, 7), the real 1 as 1.0, integers past 2^53 exact",
  );
  const quotedBig = `"${BIG_TEXT.replaceAll('"', '""')}"`;
  t.equal(
    await exported('rig-b/1.sqlite', 'readings', 'csv'),
    'serial,code,raw,note,x,big\r\n' +
      `0012,007,12,${b64('68656c6c6f')},1.0,9007199254740993\r\n` +
      '12.50,1e3,,,1e+300, 42\r\n' +
      `,-0,NULL,${b64('00ff')},-2.0,\r\n` +
      `${quotedBig},x,y,${BIG_BLOB.toString('base64')},0.1,1\r\n` +
      `"x\u0000${NUL_TAIL}",a\u0000b,z,,3.0,\r\n`,
    "rig B: '0012', '007', '12.50', '1e3' stay text; blobs stay blobs; 1.0, 1e300, -2.0 stay reals; large values whole",
  );
  const c = await exported('rig-c/1.sqlite', 'readings', 'csv');
  const want = Array.from({ length: 40 }, (_, i) => (i % 2 ? `0${i}` : `${i}.0`)).join(',');
  t.equal(c.split('\r\n')[1], want, 'rig C from its own-shape table: reals 0.0, 2.0... and text 01, 03...');
});

test('NDJSON: the class shows in the JSON (a real has a point, text is a string, a blob its base64)', async (t) => {
  const b = (await exported('rig-b/1.sqlite', 'readings', 'ndjson')).split('\n');
  t.equal(b[0], '{"serial":"0012","code":"007","raw":"12","note":"aGVsbG8=","x":1.0,"big":"9007199254740993"}', 'rig B row 1, byte for byte');
  t.equal(b[1], '{"serial":"12.50","code":"1e3","raw":"","note":"","x":1e+300,"big":" 42"}', 'rig B row 2: 1e300 a JSON number that reads back as the real');
  t.equal(b[2], '{"serial":null,"code":"-0","raw":"NULL","note":"AP8=","x":-2.0,"big":null}', 'rig B row 3');
  const big = JSON.parse(b[3]!) as Record<string, unknown>;
  t.equal(big.serial, BIG_TEXT, 'a large text read on its own, whole');
  t.equal(big.note, BIG_BLOB.toString('base64'), 'a large blob read on its own, whole');
  const nul = JSON.parse(b[4]!) as Record<string, unknown>;
  t.deepEqual([nul.serial, nul.code, nul.x], [`x\u0000${NUL_TAIL}`, 'a\u0000b', 3], 'text holding NUL, small and large, whole');
  t.ok(b[4]!.includes('"x":3.0'), 'the real 3 as 3.0');
  const a = (await exported('rig-a/1.sqlite', 'readings', 'ndjson')).split('\n');
  t.equal(a[0], '{"serial":12,"code":7,"raw":"MTI=","note":"hello","x":1.0,"big":"9007199254740993"}', 'rig A row 1');
});

test('capture_rows counts go through the catalog: the shared table and the own-shape table', async (t) => {
  const [a, b, c] = ['rig-a/1.sqlite', 'rig-b/1.sqlite', 'rig-c/1.sqlite'].map((k) => ids[k]!);
  const counts = await captureRowCounts(dataDir, app.config.database.url, [a!, b!, c!]);
  t.deepEqual([rowsOf(counts, a!, 'readings'), rowsOf(counts, b!, 'readings'), rowsOf(counts, c!, 'readings')], [2, 5, 1], 'each capture its own rows, wherever the catalog placed them');
});

test('teardown', async (t) => {
  await app.close();
  t.pass('closed');
});
