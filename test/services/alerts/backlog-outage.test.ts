// Runs beside other files: it stops only its own PostgreSQL server, and the drain it waits for takes seconds against a 30 s threshold.
// A database outage is no ingest backlog: captures queued before PostgreSQL stopped wait through the
// outage (nothing can be ingested meanwhile) and are older than alerts.backlog_s when it is back. The
// runner then drains them at its usual pace: no ingest_backlog is opened. A real backlog (the runner
// busy with one long import, the captures behind it not moving after the return) still pages, once
// they have waited alerts.backlog_s since the database came back.
import path from 'node:path';
import test, { type Test } from 'tape';
import { makeCapture } from '../../helpers/capture-files.ts';
import { startCluster, WEBHOOK_TOKEN, type Cluster, type ClusterNode } from '../../helpers/cluster.ts';
import { postgresOnly } from '../../helpers/dialect.ts';
import { fixture } from '../../helpers/fixture.ts';
import { http } from '../../helpers/http.ts';
import { sleep, waitFor } from '../../helpers/jobs.ts';
import { startPgServer, type PgServer } from '../../helpers/pg-server.ts';
import { tmpDir } from '../../helpers/tmp.ts';
import { minioEvent } from '../../helpers/webhook.ts';

const WHY = 'a PostgreSQL server stopped under a running node: SQLite has no server';
const NET = { addr: '10.144.214.2', gw: '10.144.214.1', cidr: '10.144.214.0/24' };
const BACKLOG_S = 30;
// Longer than alerts.backlog_s: every capture queued before the stop is past it when the database is back.
const OUTAGE_MS = 35_000;
// Imports read at 512 KiB/s: a small capture takes about a second, the long one minutes.
const READ_BYTES_PER_S = 512 * 1024;
const files = tmpDir('rigd-backlog-outage-');

let server: PgServer;
let c: Cluster;
let a: ClusterNode;

const setup = fixture(async () => {
  server = await startPgServer();
  c = await startCluster({
    ids: ['node-a'],
    databaseUrl: server.url(),
    rigNet: NET,
    config: {
      ingest: { concurrency: 1, read_bytes_per_s: READ_BYTES_PER_S },
      rigs: { online_after_s: 4, offline_after_s: 8 },
      alerts: { backlog_s: BACKLOG_S, min_silence_s: 1, check_interval_s: 1, repeat_s: 1 },
    },
  });
  a = c.node('node-a');
});

test.onFinish(() => {
  void (async () => {
    await c?.close();
    server?.close();
  })();
});

type IncidentRow = { id: number; kind: string; subject: string | null; opened_at: Date; last_notified_at: Date; details: string };
const incidentRows = () => c.query<IncidentRow>('SELECT id, kind, subject, opened_at, last_notified_at, details FROM incidents ORDER BY id');

async function dbNow(): Promise<number> {
  const [row] = await c.query<{ now: Date }>('SELECT now() AS now');
  return new Date(row!.now).getTime();
}

/** A rig that reports three times, then never again: its rig_offline is notified again at every sweep (repeat_s 1). */
async function goneRig(id: string): Promise<IncidentRow> {
  for (let i = 0; i < 3; i++) {
    const res = await c.net.request('rig', {
      url: `${a.rigUrl}/api/v1/rigs/${id}`,
      method: 'PUT',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `rig_serial=SN-${id}&gpsd_latitude=47.37&gpsd_longitude=8.54&local_ip=192.168.8.20&software_version=1.0&git_branch=main`,
    });
    if (res.status !== 200) throw new Error(`report of ${id}: ${res.status} ${res.body}`);
  }
  return waitFor(async () => (await incidentRows()).find((r) => r.kind === 'rig_offline' && r.subject === id), 60_000, `rig_offline for ${id}`, 250);
}

/** Until a sweep ran `afterMs` past `from` (database clock): the witness was notified again then. */
function sweptPast(witness: number, from: number, afterMs: number) {
  return waitFor(
    async () => {
      const row = (await incidentRows()).find((r) => r.id === witness);
      return row && new Date(row.last_notified_at).getTime() > from + afterMs ? row : null;
    },
    120_000,
    `a sweep ${afterMs} ms after ${new Date(from).toISOString()}`,
    250,
  );
}

/** Uploads a capture of `rows` rows and tells node-a: queued; returns its capture id. */
async function queueCapture(key: string, rows: number): Promise<number> {
  const made = await makeCapture(path.join(files, `${key.replace(/\//g, '-')}.sqlite`), {
    tables: [{ name: 'readings', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'sensor', type: 'TEXT' }, { name: 'value', type: 'REAL' }], rows }],
  });
  const { etag, size } = await c.putObject(key, made.path);
  const res = await http(`${a.url}/api/v1/webhooks/capture_uploaded`, { json: minioEvent(key, etag, size), headers: { authorization: `Bearer ${WEBHOOK_TOKEN}` } });
  const id = Number(res.json().data.objects?.[0]?.capture?.id);
  if (res.status !== 200 || !Number.isSafeInteger(id)) throw new Error(`webhook for ${key}: ${res.status} ${res.text}`);
  return id;
}

const jobStates = (ids: number[]) =>
  c.query<{ id: number; state: string }>('SELECT c.id, j.state FROM captures c JOIN jobs j ON j.id = c.job_id WHERE c.id = ANY($1::int[]) ORDER BY c.id', [ids]);

/** Queued captures and how long the oldest has waited, by the database's clock (seconds). */
async function queuedNow(): Promise<{ n: number; waited_s: number }> {
  const [row] = await c.query<{ n: string; waited_s: number | null }>(
    "SELECT COUNT(*) AS n, EXTRACT(EPOCH FROM now() - MIN(j.created_at))::float AS waited_s FROM captures c JOIN jobs j ON j.id = c.job_id WHERE j.state = 'queued'",
  );
  return { n: Number(row!.n), waited_s: Number(row!.waited_s ?? 0) };
}

/** Stops the server for OUTAGE_MS, starts it; the database's now once it answers again. */
async function outage(): Promise<number> {
  server.stop();
  await sleep(OUTAGE_MS);
  server.start();
  return waitFor(() => dbNow().catch(() => null), 60_000, 'the database back', 250);
}

function fail(t: Test, err: unknown) {
  t.fail(`${(err as Error).message}\n${c ? c.outputs() : ''}`);
}

let witnessId: number;
/** The real backlog's incident. */
let backlogId: number;

test('captures queued before a database outage longer than alerts.backlog_s, drained normally after it: no ingest_backlog', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  try {
    witnessId = (await goneRig('gone1')).id;
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) ids.push(await queueCapture(`rig1/before-${i}.sqlite`, 2_000));
    const back = await outage();
    const waiting = await queuedNow();
    t.ok(waiting.n >= 2, `${waiting.n} captures still queued when the database is back`);
    t.ok(waiting.waited_s > BACKLOG_S, `the oldest has waited ${waiting.waited_s.toFixed(1)} s (over alerts.backlog_s = ${BACKLOG_S})`);
    await waitFor(async () => (await jobStates(ids)).every((r) => r.state === 'done') || null, 120_000, 'every capture ingested', 250);
    const drained = await dbNow();
    t.pass(`drained ${((drained - back) / 1000).toFixed(1)} s after the database came back`);
    // A sweep after the last one was ingested: one that could have paged during the drain has run.
    await sweptPast(witnessId, drained, 2000);
    const backlog = (await incidentRows()).filter((r) => r.kind === 'ingest_backlog');
    t.deepEqual(backlog.map((r) => `${r.kind} opened ${new Date(r.opened_at).toISOString()}: ${r.details}`), [], 'no ingest_backlog: the wait was the database outage');
  } catch (err) {
    fail(t, err);
  }
});

test('a real backlog after the outage (the runner held by long imports): ingest_backlog once they waited alerts.backlog_s since the return', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  try {
    // About 25 MiB each: at READ_BYTES_PER_S one import takes far longer than alerts.backlog_s, and
    // the runner (ingest.concurrency 1) takes one at a time: the others do not move.
    const long: number[] = [];
    for (let i = 0; i < 4; i++) long.push(await queueCapture(`rig2/long-${i}.sqlite`, 900_000 + i));
    const known = new Set((await incidentRows()).map((r) => r.id));
    const back = await outage();
    const opened = await waitFor(async () => (await incidentRows()).find((r) => !known.has(r.id) && r.kind === 'ingest_backlog'), 180_000, 'ingest_backlog opened', 250);
    backlogId = opened.id;
    const after = (new Date(opened.opened_at).getTime() - back) / 1000;
    t.ok(after > BACKLOG_S / 2, `opened ${after.toFixed(1)} s after the database came back (alerts.backlog_s = ${BACKLOG_S}): not at once`);
    const states = (await jobStates(long)).map((r) => r.state);
    t.ok(states.filter((s) => s === 'queued').length >= 2, `long imports still queued when it opened: ${states.join(', ')}`);
    const details = JSON.parse(opened.details) as { queued: number };
    t.ok(details.queued >= 2, `details name ${details.queued} queued captures`);
  } catch (err) {
    fail(t, err);
  }
});

test('that ingest_backlog, open, stays open through another outage: not resolved by the database\'s return, not opened again', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  try {
    const known = new Set((await incidentRows()).map((r) => r.id));
    server.stop();
    await sleep(OUTAGE_MS / 2);
    server.start();
    const back = await waitFor(() => dbNow().catch(() => null), 60_000, 'the database back', 250);
    await sweptPast(witnessId, back, 5000);
    const [row] = await c.query<{ resolved_at: Date | null }>('SELECT resolved_at FROM incidents WHERE id = $1', [backlogId]);
    t.equal(row?.resolved_at, null, 'the ingest_backlog is still open');
    t.deepEqual((await incidentRows()).filter((r) => !known.has(r.id) && r.kind === 'ingest_backlog').map((r) => r.id), [], 'no second ingest_backlog');
  } catch (err) {
    fail(t, err);
  }
});
