// The ingester end to end on the embedded store: real capture files with thousands of rows are
// ingested with their tables and row counts; broken and hostile files each end failed with a
// clear reason while the worker keeps going; a file past the cap is refused while it is read.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import test from 'tape';
import { downloadTo, ObjectTooLarge, readThrough } from '../../src/ingest/capture-download.ts';
import { ingestTmpDir } from '../../src/ingest/capture-worker.ts';
import type { ObjectStorage } from '../../src/storage/contract.ts';
import { countRows } from '../helpers/capture-store.ts';
import { fixture } from '../helpers/fixture.ts';
import { putFile, settled, settledJob, tableShapes } from '../helpers/captures.ts';
import { corruptPage, makeCapture, makeHostileCapture, makeHugeRowCapture, sha256File, truncateCopy, type HostileKind } from '../helpers/capture-files.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';

const MiB = 1024 * 1024;
const files = tmpDir();
let s: TestServer;

const setup = fixture(async () => {
  s = await startServer({ storage: { max_upload_size: 20 * MiB }, ingest: { concurrency: 2 } });
});

test('a real capture: ingested with its tables, columns and row counts, size and sha256', async (t) => {
  await setup();
  const file = path.join(files, 'good.sqlite');
  const made = await makeCapture(file);
  t.ok(made.tables.reduce((n, x) => n + x.rows, 0) >= 9000, 'thousands of rows in several tables');
  const stored = await putFile(s.app, 'rig1/good.sqlite', file);
  const q = await s.app.captures.queueTarget('rig1/good.sqlite');
  t.deepEqual([q.created, q.queued, q.capture.state, q.capture.etag], [true, true, 'queued', stored.etag], 'queued with the stored etag');
  const c = await settled(s.app, q.capture.id);
  t.equal(c.state, 'ingested', `ingested ${c.last_error ?? ''}`);
  t.deepEqual(tableShapes(c.tables), made.tables, 'tables, columns and row counts exactly as made');
  const counts: number[] = [];
  for (const table of made.tables) counts.push(await countRows(s.app.config.data_dir, table.name, c.id));
  t.deepEqual(counts, made.tables.map((x) => x.rows), 'every row imported into the capture store, tagged with the capture');
  t.deepEqual([c.size, c.sha256], [made.sizeBytes, made.sha256], 'size and sha256 of the file');
  t.equal(c.page_size, 4096, 'page size');
  t.equal(c.page_count, made.sizeBytes / 4096, 'page count');
  t.equal(c.attempts, 1, 'one attempt');
  const rows = made.tables.reduce((n, x) => n + x.rows, 0);
  t.deepEqual(c.progress, { step: 'done', bytes: made.sizeBytes, total: made.sizeBytes, rows }, 'progress at the end, in bytes and rows');
  t.ok(c.started_at && c.finished_at, 'timestamps');
  const job = await settledJob(s.app, c.job_id!).catch(() => null);
  t.equal(job?.state, 'done', 'its job is done');
  const again = await s.app.captures.queueTarget('rig1/good.sqlite', { retryFailed: true });
  t.deepEqual([again.created, again.enqueued, again.queued, again.capture.id], [false, false, true, c.id], 'the same version again: the same capture, ingested, nothing queued anew');
  t.equal(await s.app.db.models.Job.count(), 1, 'no second job');
  t.deepEqual(readdirSync(ingestTmpDir(s.config)), [], 'no temp file left');
});

const broken: [string, (file: string) => Promise<unknown>, string, RegExp][] = [
  ['not SQLite (random bytes)', (f) => makeHostileCapture(f, 'random_bytes'), 'not_sqlite', /not a SQLite database/],
  ['not SQLite (text)', (f) => makeHostileCapture(f, 'text'), 'not_sqlite', /not a SQLite database/],
  [
    'truncated',
    async (f) => {
      await makeCapture(`${f}.full`);
      await truncateCopy(`${f}.full`, f);
    },
    'truncated',
    /truncated/,
  ],
  [
    'corrupt pages',
    async (f) => {
      await makeCapture(f);
      await corruptPage(f);
    },
    'corrupt',
    /./,
  ],
  ['a trigger', (f) => makeHostileCapture(f, 'trigger'), 'unsupported_schema', /trigger/i],
  ['a view calling functions', (f) => makeHostileCapture(f, 'view_functions'), 'unsupported_schema', /view/i],
  ['a trigger recorded as a table', (f) => makeHostileCapture(f, 'forged_trigger_type' as HostileKind), 'corrupt', /malformed database schema/],
  ['a CHECK calling a function', (f) => makeHostileCapture(f, 'check_function' as HostileKind), 'unsupported_schema', /function/i],
  ['a huge row', (f) => makeHugeRowCapture(f, 17 * MiB), 'row_too_large', /larger than the limit/],
];

test('broken and hostile files: each failed for good with its reason; the worker keeps going', async (t) => {
  await setup();
  const ids: [string, number, string, RegExp][] = [];
  for (const [what, make, code, re] of broken) {
    const file = path.join(files, `${code}-${ids.length}.sqlite`);
    await make(file);
    const key = `hostile/${ids.length}.sqlite`;
    await putFile(s.app, key, file);
    ids.push([what, (await s.app.captures.queueTarget(key)).capture.id, code, re]);
  }
  const good = path.join(files, 'after.sqlite');
  const made = await makeCapture(good, { tables: [{ name: 't', columns: [{ name: 'a', type: 'INTEGER' }], rows: 2500 }] });
  await putFile(s.app, 'after.sqlite', good);
  const after = (await s.app.captures.queueTarget('after.sqlite')).capture.id;
  for (const [what, id, code, re] of ids) {
    const c = await settled(s.app, id);
    t.deepEqual([c.state, c.error_code], ['failed', code], `${what}: failed, ${code}`);
    t.match(c.last_error ?? '', re, `${what}: ${c.last_error}`);
    t.equal(c.attempts, 1, `${what}: not retried`);
    const job = await settledJob(s.app, c.job_id!).catch(() => null);
    t.equal(job?.state, 'failed', `${what}: its job failed`);
  }
  const ok = await settled(s.app, after);
  t.deepEqual([ok.state, tableShapes(ok.tables)], ['ingested', made.tables], 'a good file after them is ingested');
  t.deepEqual(readdirSync(ingestTmpDir(s.config)), [], 'no temp file left');
});

test('a file larger than the cap: refused from the size storage reports, and by the reader past the cap', async (t) => {
  await setup();
  const file = path.join(files, 'big.sqlite');
  await makeCapture(file, { tables: [{ name: 'big', columns: [{ name: 'b', type: 'BLOB' }], rows: 0 }], extraSql: ['INSERT INTO big SELECT zeroblob(1000000) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 21) SELECT i FROM n)'] });
  await putFile(s.app, 'big.sqlite', file);
  const c = await settled(s.app, (await s.app.captures.queueTarget('big.sqlite')).capture.id);
  t.deepEqual([c.state, c.error_code], ['failed', 'too_large'], `failed: too_large (${c.last_error})`);
  t.match(c.last_error ?? '', /larger than the limit of 20971520 bytes/, 'says the limit');

  // A source that lies about its length: the reader stops just past the cap, whatever storage said.
  let pulled = 0;
  const endless = new Readable({
    read() {
      pulled += 64 * 1024;
      this.push(Buffer.alloc(64 * 1024));
    },
  });
  try {
    await downloadTo(endless, path.join(files, 'endless.bin'), { maxBytes: MiB });
    t.fail('an endless source must be refused');
  } catch (err) {
    t.ok(err instanceof ObjectTooLarge, 'ObjectTooLarge');
  }
  t.ok(pulled <= MiB + 64 * 64 * 1024, `stopped reading near the cap (${pulled} bytes pulled)`);
  t.ok(endless.destroyed, 'source destroyed');
});

test('downloadTo: hashes while streaming and paces to a read rate', async (t) => {
  await setup();
  const data = Buffer.alloc(300 * 1024, 7);
  const started = Date.now();
  const got = await downloadTo(Readable.from([data.subarray(0, 100 * 1024), data.subarray(100 * 1024, 200 * 1024), data.subarray(200 * 1024)]), path.join(files, 'paced.bin'), {
    maxBytes: MiB,
    bytesPerSecond: 1024 * 1024,
  });
  const ms = Date.now() - started;
  t.equal(got.bytes, data.length, 'all bytes');
  t.equal(got.sha256, createHash('sha256').update(data).digest('hex'), 'sha256');
  t.ok(ms >= 250, `paced: 300 KiB at 1 MiB/s took ${ms} ms`);
});

test('readThrough: hashes a local file in pieces, stops past the cap, honours an abort', async (t) => {
  await setup();
  const data = Buffer.alloc(2.5 * MiB);
  for (let i = 0; i < data.length; i++) data[i] = (i * 31) & 255;
  const file = path.join(files, 'through.bin');
  writeFileSync(file, data);
  const seen: number[] = [];
  const got = await readThrough(file, { maxBytes: 10 * MiB, onBytes: (n) => seen.push(n) });
  t.deepEqual([got.bytes, got.sha256], [data.length, createHash('sha256').update(data).digest('hex')], 'every byte, sha256 of the content');
  t.deepEqual(seen, [MiB, 2 * MiB, 2.5 * MiB], 'read in 1 MiB pieces');
  const err = await readThrough(file, { maxBytes: MiB }).catch((e: Error) => e);
  t.ok(err instanceof ObjectTooLarge, 'past the cap: ObjectTooLarge');
  const stop = new AbortController();
  stop.abort();
  const aborted = await readThrough(file, { maxBytes: 10 * MiB, signal: stop.signal }).catch((e: Error) => e);
  t.equal((aborted as Error).name, 'AbortError', 'an aborted read stops');
});

test('an object gone from storage, or overwritten since it was queued: failed, not retried', async (t) => {
  await setup();
  const file = path.join(files, 'v1.sqlite');
  await makeCapture(file, { tables: [{ name: 't', columns: [{ name: 'a', type: 'INTEGER' }], rows: 10 }] });
  const v1 = await putFile(s.app, 'over.sqlite', file);
  // Queue v1 by a storage event while the runner is busy elsewhere: stop it from claiming by queueing after a v2 overwrite.
  const file2 = path.join(files, 'v2.sqlite');
  await makeCapture(file2, { tables: [{ name: 't', columns: [{ name: 'a', type: 'INTEGER' }], rows: 20 }] });
  await putFile(s.app, 'over.sqlite', file2);
  const q = await s.app.captures.queueObject({ key: 'over.sqlite', etag: v1.etag, size: v1.size, url: '' });
  const c = await settled(s.app, q.capture.id);
  t.deepEqual([c.state, c.error_code], ['failed', 'object_changed'], `v1 after an overwrite: object_changed (${c.last_error})`);
  const gone = await s.app.captures.queueObject({ key: 'never-stored.sqlite', etag: 'd41d8cd98f00b204e9800998ecf8427e', size: 0, url: '' });
  const g = await settled(s.app, gone.capture.id);
  t.deepEqual([g.state, g.error_code], ['failed', 'object_missing'], 'an object that is not there: object_missing');
  t.equal(await sha256File(file2).then((h) => h.length), 64, 'v2 untouched');
});

test('the embedded store: the held version is read in place (a hard link, no copy), a copy when it cannot be linked', async (t) => {
  await setup();
  const storage: ObjectStorage = s.app.storage;
  const read = storage.read.bind(storage);
  const linkHeld = storage.linkHeld!.bind(storage);
  let reads = 0;
  let linked = 0;
  let linkable = true;
  storage.read = (key, version) => (reads++, read(key, version));
  storage.linkHeld = async (key, version, file) => {
    if (!linkable) return false;
    const ok = await linkHeld(key, version, file);
    if (ok) linked += statSync(file).nlink > 1 ? 1 : 0;
    return ok;
  };
  try {
    for (const how of ['linked', 'copied']) {
      linkable = how === 'linked';
      reads = 0;
      linked = 0;
      const file = path.join(files, `in-place-${how}.sqlite`);
      const made = await makeCapture(file, { tables: [{ name: 't', columns: [{ name: 'a', type: 'INTEGER' }], rows: 500 }] });
      await putFile(s.app, `rig1/in-place-${how}.sqlite`, file);
      const q = await s.app.captures.queueTarget(`rig1/in-place-${how}.sqlite`);
      const c = await settled(s.app, q.capture.id);
      t.equal(c.state, 'ingested', `${how}: ingested ${c.last_error ?? ''}`);
      t.deepEqual([c.size, c.sha256], [made.sizeBytes, made.sha256], `${how}: size and sha256 of the file`);
      t.equal(await countRows(s.app.config.data_dir, 't', c.id), 500, `${how}: every row in the store`);
      t.deepEqual([linked, reads], how === 'linked' ? [1, 0] : [0, 1], how === 'linked' ? 'a link to the kept version, never read through storage' : 'read through storage into a temp copy');
      t.deepEqual(readdirSync(ingestTmpDir(s.config)), [], `${how}: nothing left in the temp dir`);
      const stored = createHash('sha256');
      for await (const chunk of await read(`rig1/in-place-${how}.sqlite`)) stored.update(chunk as Buffer);
      t.equal(stored.digest('hex'), made.sha256, `${how}: the stored object unchanged`);
    }
  } finally {
    storage.read = read;
    storage.linkHeld = linkHeld;
  }
});

test('the embedded store: a held version that is not its etag commits nothing while it is hashed during the import', async (t) => {
  await setup();
  const storage: ObjectStorage = s.app.storage;
  const linkHeld = storage.linkHeld!.bind(storage);
  const imposter = path.join(files, 'imposter.sqlite');
  await makeCapture(imposter, { tables: [{ name: 'held', columns: [{ name: 'a', type: 'INTEGER' }], rows: 700 }] });
  const file = path.join(files, 'held-real.sqlite');
  const made = await makeCapture(file, { tables: [{ name: 'held', columns: [{ name: 'a', type: 'INTEGER' }], rows: 500 }] });
  let calls = 0;
  let rowsBeforeRetry = -1;
  let captureId = 0;
  // First attempt: the "held version" is another file (its hash is not the etag); then the real one.
  storage.linkHeld = async (key, version, target) => {
    calls++;
    if (calls === 1) {
      writeFileSync(target, readFileSync(imposter));
      return true;
    }
    // Before this attempt imports anything; no table yet means no rows either.
    rowsBeforeRetry = await countRows(s.app.config.data_dir, 'held', captureId).catch((e: Error) => (/no such table|does not exist/.test(e.message) ? 0 : Promise.reject(e)));
    return linkHeld(key, version, target);
  };
  try {
    await putFile(s.app, 'rig1/held-imposter.sqlite', file);
    const q = await s.app.captures.queueTarget('rig1/held-imposter.sqlite');
    captureId = q.capture.id;
    const c = await settled(s.app, captureId);
    t.equal(c.state, 'ingested', `ingested on the next attempt ${c.last_error ?? ''}`);
    t.equal(calls, 2, 'two attempts: the first one failed on the hash');
    t.equal(rowsBeforeRetry, 0, "the imposter's rows were never committed (none in the store before the next attempt)");
    t.equal(await countRows(s.app.config.data_dir, 'held', c.id), 500, 'then the rows of the stored version');
    t.deepEqual([c.size, c.sha256], [made.sizeBytes, made.sha256], 'size and sha256 of the stored version');
    t.deepEqual(readdirSync(ingestTmpDir(s.config)), [], 'nothing left in the temp dir');
  } finally {
    storage.linkHeld = linkHeld;
  }
});

test('teardown', async (t) => {
  await setup();
  await s.close();
  t.pass('closed');
});
