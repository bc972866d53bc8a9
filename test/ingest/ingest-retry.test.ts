// test: alone (bounds on retry delays, +50 ms)
// Storage outages during ingestion, with the minio driver against s3rver: while storage is down the
// capture reads queued with the error (storage_error) and its job backs off (delays doubling) without
// using up an attempt, however long the outage lasts; when storage returns the capture is ingested.
// A job the reclaim gives up fails its capture.
// Nothing here depends on how fast this machine is: storage faults are refused connections (not
// timeouts), a storage answer may take up to 10 s, delays are read from the job rows the runner
// wrote, and every bound is either a lower one (a job never runs before its time) or generous.
import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { QueryTypes } from 'sequelize';
import test from 'tape';
import { CaptureWorker } from '../../src/ingest/capture-worker.ts';
import { silentLogger } from '../../src/log.ts';
import { openApp, type App } from '../../src/services/app.ts';
import { settled, tableShapes } from '../helpers/captures.ts';
import { makeCapture } from '../helpers/capture-files.ts';
import { http } from '../helpers/http.ts';
import { waitFor } from '../helpers/jobs.ts';
import { testConfig } from '../helpers/server.ts';
import { onPostgres } from '../helpers/dialect.ts';
import { closedPort } from '../helpers/storage.ts';
import { tmpDir } from '../helpers/tmp.ts';

const files = tmpDir();
const BASE_MS = 400;
/** A storage answer may take this long (s3rver runs in this process, beside the worker). */
const STORAGE_TIMEOUT_MS = 10_000;

function minioConfig(port: number, maxAttempts: number) {
  return testConfig({
    storage: { driver: 'minio', minio: { endpoint: '127.0.0.1', port, access_key: 'S3RVER', secret_key: 'S3RVER', timeout_ms: STORAGE_TIMEOUT_MS } },
    ingest: { max_attempts: maxAttempts },
  });
}

function worker(app: App): CaptureWorker {
  return new CaptureWorker(app.db, app.storage, app.config, silentLogger, {
    pollMs: 50,
    backoff: { baseMs: BASE_MS, jitter: 0 },
  });
}

/**
 * Each retry as the runner wrote it, in order (1 = the first), kept by a trigger on the jobs table (no
 * read can come too late: the next claim overwrites the row). The delay the runner chose lies between two readings:
 * run_after - updated_at (updated_at is stamped after the time the delay counts from: at most the
 * delay) and run_after - started_at (the attempt's claim came before: at least the delay).
 */
async function recordRetries(app: App): Promise<() => Promise<Map<number, { atMost: number; atLeast: number }>>> {
  const q = (sql: string) => app.db.sequelize.query(sql);
  if (onPostgres) {
    await q('CREATE TABLE retries_seen (n serial PRIMARY KEY, attempts integer, run_after timestamptz, updated_at timestamptz, started_at timestamptz)');
    await q(`CREATE FUNCTION retries_seen() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO retries_seen (attempts, run_after, updated_at, started_at) VALUES (NEW.attempts, NEW.run_after, NEW.updated_at, NEW.started_at); RETURN NULL; END $$`);
    await q(`CREATE TRIGGER retries_seen AFTER UPDATE ON jobs FOR EACH ROW WHEN (NEW.state = 'queued' AND OLD.state = 'running') EXECUTE FUNCTION retries_seen()`);
  } else {
    await q('CREATE TABLE retries_seen (n INTEGER PRIMARY KEY, attempts INTEGER, run_after TEXT, updated_at TEXT, started_at TEXT)');
    await q(`CREATE TRIGGER retries_seen AFTER UPDATE OF state ON jobs WHEN NEW.state = 'queued' AND OLD.state = 'running'
      BEGIN INSERT INTO retries_seen (attempts, run_after, updated_at, started_at) VALUES (NEW.attempts, NEW.run_after, NEW.updated_at, NEW.started_at); END`);
  }
  return async () => {
    const rows = await app.db.sequelize.query<{ attempts: number; run_after: string | Date; updated_at: string | Date; started_at: string | Date }>(
      'SELECT attempts, run_after, updated_at, started_at FROM retries_seen ORDER BY n',
      { type: QueryTypes.SELECT },
    );
    const ms = (v: string | Date) => new Date(v).getTime();
    return new Map(rows.map((r, i) => [i + 1, { atMost: ms(r.run_after) - ms(r.updated_at), atLeast: ms(r.run_after) - ms(r.started_at) }]));
  };
}

test('storage down, then back: retried with backoff, no attempt used up, then ingested', async (t) => {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'rigd-s3-'));
  const port = await closedPort();
  let s3 = new S3rver({ address: '127.0.0.1', port, silent: true, directory });
  await s3.run();
  const app = await openApp(minioConfig(port, 6));
  const retries = await recordRetries(app);
  const w = worker(app);
  try {
    await app.storage.ensureBucket();
    const made = await makeCapture(path.join(files, 'a.sqlite'));
    const put = await http(await app.storage.presignPut('rig1/a.sqlite', 900), { method: 'PUT', body: readFileSync(made.path) });
    t.equal(put.status, 200, 'stored in s3rver');
    const q = await app.captures.queueTarget('rig1/a.sqlite');
    t.equal(q.capture.state, 'queued', 'queued while storage answers');

    s3.httpServer?.closeAllConnections();
    await s3.close();
    await w.start();
    const retrying = await waitFor(async () => {
      const c = await app.captures.get(q.capture.id);
      return (await retries()).size >= 3 && c.state === 'queued' ? c : null;
    }, 60_000, 'three failed runs');
    t.equal(retrying.error_code, 'storage_error', 'back to queued with the storage error');
    t.match(retrying.last_error ?? '', /storage .* failed|did not answer/, `the error: ${retrying.last_error}`);

    s3 = new S3rver({ address: '127.0.0.1', port, silent: true, directory });
    await s3.run();
    const done = await settled(app, q.capture.id, 60_000);
    const seen = await retries();
    t.equal(done.state, 'ingested', `ingested once storage is back (attempt ${done.attempts})`);
    t.deepEqual(tableShapes(done.tables), made.tables, 'with its tables');
    t.equal(done.attempts, 1, 'the runs storage was down for used up no attempt');
    // The reading from below may only fall short of the scheduled delay (by the time from where it
    // counts to updated_at: 13-17 ms here, any amount on a loaded machine), the reading from above
    // may only exceed it (by the attempt's run: a refused connection, milliseconds when all is
    // well): each is bounded on its own side only (+50 / -1 ms: clocks and rounding to ms).
    const within = (r: { atMost: number; atLeast: number } | undefined, ms: number) => !!r && r.atMost <= ms + 50 && r.atLeast >= ms - 1;
    const first = seen.get(1);
    const second = seen.get(2);
    t.ok(within(first, BASE_MS), `first retry after ${BASE_MS} ms (read between ${first?.atMost} and ${first?.atLeast})`);
    t.ok(within(second, 2 * BASE_MS), `second after ${2 * BASE_MS} ms: doubling (read between ${second?.atMost} and ${second?.atLeast})`);
  } finally {
    await w.stop();
    await app.close();
    s3.httpServer?.closeAllConnections();
    await s3.close().catch(() => undefined);
  }
});

test('storage down longer than max_attempts runs: the capture stays queued, and is ingested when storage is back', async (t) => {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'rigd-s3-'));
  const port = await closedPort();
  let s3 = new S3rver({ address: '127.0.0.1', port, silent: true, directory });
  await s3.run();
  const app = await openApp(minioConfig(port, 2));
  const retries = await recordRetries(app);
  const w = worker(app);
  try {
    await app.storage.ensureBucket();
    const made = await makeCapture(path.join(files, 'b.sqlite'));
    const put = await http(await app.storage.presignPut('rig2/b.sqlite', 900), { method: 'PUT', body: readFileSync(made.path) });
    t.equal(put.status, 200, 'stored in s3rver');
    const q = await app.captures.queueTarget('rig2/b.sqlite');
    t.equal(q.capture.state, 'queued', 'queued (acknowledged) while storage answers');

    s3.httpServer?.closeAllConnections();
    await s3.close();
    await w.start();
    // Twice as many runs as max_attempts allows, or the capture settled (which it must not).
    const during = await waitFor(async () => {
      const c = await app.captures.get(q.capture.id);
      return (await retries()).size >= 4 || c.state === 'failed' || c.state === 'ingested' ? c : null;
    }, 60_000, 'four failed runs');
    t.deepEqual([during.state, during.error_code], ['queued', 'storage_error'], `still queued with the storage error after ${(await retries()).size} runs: ${during.last_error}`);
    t.match(during.last_error ?? '', /storage .* failed|did not answer/, 'the error says storage failed');

    s3 = new S3rver({ address: '127.0.0.1', port, silent: true, directory });
    await s3.run();
    const done = await settled(app, q.capture.id, 60_000);
    t.equal(done.state, 'ingested', 'ingested by itself once storage is back');
    t.deepEqual(tableShapes(done.tables), made.tables, 'with its tables');
  } finally {
    await w.stop();
    await app.close();
    s3.httpServer?.closeAllConnections();
    await s3.close().catch(() => undefined);
  }
});

test('a job given up by the reclaim (its process died on the last attempt): the capture reads failed at once, lease_lost', async (t) => {
  const app = await openApp(minioConfig(await closedPort(), 1));
  const w = worker(app);
  try {
    const q = await app.captures.queueObject({ key: 'rig3/c.sqlite', etag: 'abc', size: 1, url: '' });
    // The node that claimed it stopped (the registry says so): its lease is not waited for.
    await app.db.writes.run(async (transaction) => {
      const at = new Date();
      await app.db.models.Node.create({ instance_id: 'gw-gone', run_id: 'r1', hostname: 'gateway', pid: 1, version: '0.1.0', started_at: at, heartbeat_at: at, stopped_at: at }, { transaction });
      await app.db.models.Job.update(
        { state: 'running', attempts: 1, lease_owner: 'gw-gone/ab12', lease_expires_at: new Date(Date.now() + 60_000), started_at: new Date() },
        { where: { id: q.capture.job_id! }, transaction },
      );
    });
    t.equal((await app.captures.get(q.capture.id)).state, 'ingesting', 'its job running: ingesting');
    await w.start();
    const c = await settled(app, q.capture.id, 60_000);
    t.deepEqual([c.state, c.error_code, c.attempts], ['failed', 'lease_lost', 1], 'failed: lease_lost, the attempt counted');
    t.match(c.last_error ?? '', /gave up after 1 attempts: lease of .*ab12 lost \(node gw-gone stopped\)/, `the job's reason: ${c.last_error}`);
    t.ok(c.finished_at, 'finished_at from the job');
  } finally {
    await w.stop();
    await app.close();
  }
});
