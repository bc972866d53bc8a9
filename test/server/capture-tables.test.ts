// GET /api/v1/captures/{id}/tables/{table}: one capture's rows of one table, streamed from a real
// capture store over a real socket. A token is required (401 without); CSV and NDJSON with their
// content types and an attachment file name (filename* for a non-ASCII table name); the answer is a
// stream (chunked, no Content-Length) and a client that goes away releases the store; unknown
// capture and table are 404, a capture not ingested 409, a bad format 400, all as JSON errors.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { request } from 'undici';
import { settledStoreHandles, storeHandles } from '../helpers/capture-store.ts';
import { putFile, settled } from '../helpers/captures.ts';
import { seedCapture, type SeedTable } from '../helpers/seed-capture.ts';
import { http } from '../helpers/http.ts';
import { waitFor } from '../helpers/jobs.ts';
import { startServer, userWithToken, type TestServer } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';

const files = tmpDir();
const BLOB = Buffer.from('blob\u0000bytes');
const frames: SeedTable = {
  name: 'frames',
  columns: [
    { name: 'ts', type: 'TEXT' },
    { name: 'img', type: 'BLOB' },
    { name: 'v', type: 'REAL' },
  ],
  rows: [
    ['2026-11-23T08:00:00Z', BLOB, 0.5],
    ['2026-11-23T08:00:01Z', null, null],
  ],
};
const accented: SeedTable = { name: 'mesures été', columns: [{ name: 'x', type: 'INTEGER' }], rows: [[1]] };
const long: SeedTable = { name: 'long', columns: [{ name: 'i', type: 'INTEGER' }, { name: 's', type: 'TEXT' }], rows: Array.from({ length: 60_000 }, (_, i) => [i, 'y'.repeat(200)]) };

let s: TestServer;
let token = '';
let id = 0;
let failed = 0;

/** File descriptors of this process open on the capture store (the server runs in this process). */
const handles = () => storeHandles(s.config.data_dir);

const url = (p: string) => `${s.url}/api/v1/captures/${p}`;
const auth = () => ({ authorization: token });

test('setup: a server, a user, an imported capture and a failed one', async (t) => {
  s = await startServer();
  token = (await userWithToken(s, 'ana')).token;
  await seedCapture(s.app, files, 'rig1/other.sqlite', [{ name: 'frames', columns: [{ name: 'zz', type: 'TEXT' }], rows: [['other']] }]);
  id = await seedCapture(s.app, files, 'rig1/a.sqlite', [frames, accented, long]);
  writeFileSync(path.join(files, 'junk.sqlite'), 'no database here '.repeat(20));
  await putFile(s.app, 'rig1/junk.sqlite', path.join(files, 'junk.sqlite'));
  const q = await s.app.captures.queueObject({ key: 'rig1/junk.sqlite', url: s.app.storage.objectUrl('rig1/junk.sqlite') });
  failed = (await settled(s.app, q.capture.id)).state === 'failed' ? q.capture.id : 0;
  t.ok(id > 0 && failed > 0);
});

test('a token is required: 401 JSON without one', async (t) => {
  const res = await http(url(`${id}/tables/frames`));
  t.equal(res.status, 401);
  t.equal(res.json().error.code, 'missing_token');
  t.notOk(res.text.includes('2026-11-23'), 'no rows');
});

test('CSV: streamed, text/csv, attachment capture-<id>-<table>.csv, the capture rows only', async (t) => {
  const res = await http(url(`${id}/tables/frames`), { headers: auth() });
  t.equal(res.status, 200);
  t.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
  t.equal(res.headers['content-disposition'], `attachment; filename="capture-${id}-frames.csv"`);
  t.equal(res.headers['transfer-encoding'], 'chunked', 'streamed: chunked');
  t.equal(res.headers['content-length'], undefined, 'no Content-Length (not a buffered body)');
  t.equal(res.text, `ts,img,v\r\n2026-11-23T08:00:00Z,${BLOB.toString('base64')},0.5\r\n2026-11-23T08:00:01Z,,\r\n`);
  const explicit = await http(url(`${id}/tables/FRAMES?format=csv`), { headers: { authorization: `Bearer ${token}` } });
  t.equal(explicit.text, res.text, 'format=csv, any case of the name, a Bearer token');
});

test('NDJSON: application/x-ndjson, one object per line', async (t) => {
  const res = await http(url(`${id}/tables/frames?format=ndjson`), { headers: auth() });
  t.equal(res.status, 200);
  t.equal(res.headers['content-type'], 'application/x-ndjson');
  t.equal(res.headers['content-disposition'], `attachment; filename="capture-${id}-frames.ndjson"`);
  t.deepEqual(
    res.text.trimEnd().split('\n').map((l) => JSON.parse(l)),
    [
      { ts: '2026-11-23T08:00:00Z', img: BLOB.toString('base64'), v: 0.5 },
      { ts: '2026-11-23T08:00:01Z', img: null, v: null },
    ],
  );
});

test('a non-ASCII table name: an ASCII filename and the exact one in filename*', async (t) => {
  const res = await http(url(`${id}/tables/${encodeURIComponent('mesures été')}`), { headers: auth() });
  t.equal(res.status, 200);
  t.equal(res.headers['content-disposition'], `attachment; filename="capture-${id}-mesures _t_.csv"; filename*=UTF-8''capture-${id}-mesures%20%C3%A9t%C3%A9.csv`);
  t.equal(res.text, 'x\r\n1\r\n');
});

test('a long table arrives whole; a client that leaves early releases the store', async (t) => {
  // The capture worker keeps its writer open on the store: count the handles beyond it.
  const idle = await settledStoreHandles(s.config.data_dir);
  const whole = await http(url(`${id}/tables/long`), { headers: auth() });
  t.equal(whole.text.split('\r\n').length, 60_002, 'header, 60000 rows, the empty tail');
  // The export closes its handle once the answer has gone out, a moment after the client has it:
  // on a busy machine longer than settledStoreHandles' 400 ms of a held count. Wait (60 s at most);
  // a handle left open keeps the count above.
  await waitFor(async () => (await handles()) <= idle, 60_000, 'the store to be closed').catch(() => undefined);
  t.equal(await settledStoreHandles(s.config.data_dir), idle, 'no store handle left after a whole answer');
  const res = await request(url(`${id}/tables/long`), { headers: auth() });
  t.equal(res.statusCode, 200);
  for await (const chunk of res.body) {
    t.ok(chunk.length > 0, 'a first chunk');
    t.ok((await handles()) > idle, 'the store is open while 12 MB stream');
    break; // leaves the loop: undici destroys the body and the socket
  }
  await waitFor(async () => (await handles()) === idle, 60_000, 'the store to be closed');
  t.pass('the store is closed once the client has gone');
  const again = await http(url(`${id}/tables/frames`), { headers: auth() });
  t.equal(again.status, 200, 'and the next export works');
});

test('errors: 404 unknown capture or table (naming its tables), 409 not ingested, 400 bad format or id', async (t) => {
  const noCapture = await http(url('99999/tables/frames'), { headers: auth() });
  t.deepEqual([noCapture.status, noCapture.json().error.code], [404, 'not_found']);
  const noTable = await http(url(`${id}/tables/nope`), { headers: auth() });
  t.deepEqual([noTable.status, noTable.json().error.code], [404, 'table_not_found']);
  t.equal(noTable.json().error.message, `capture ${id} has no table "nope" (its tables: frames, mesures été, long)`);
  const notIngested = await http(url(`${failed}/tables/frames`), { headers: auth() });
  t.deepEqual([notIngested.status, notIngested.json().error.code], [409, 'capture_not_ingested']);
  const format = await http(url(`${id}/tables/frames?format=xml`), { headers: auth() });
  t.equal(format.status, 400);
  t.match(format.headers['content-type'] as string, /^application\/json/);
  t.match(format.text, /format/);
  const badId = await http(url('abc/tables/frames'), { headers: auth() });
  t.equal(badId.status, 400);
});

test('teardown', async () => {
  await s.close();
});
