// test: alone (pg_ctl restart under a running cluster)
// PostgreSQL going away under a running `rigd serve` (a server of this file's own: pg_ctl stop,
// start, restart). While it is gone rigs get 503 text/plain (never 500), /healthz is 503 naming the
// database, the log has one line per outage and no stack; afterwards every connection rigd holds
// (pool, LISTEN, duties lock, capture store) is back by itself, /healthz is 200 again, and every
// acknowledged report is stored exactly once. An import cut by the outage neither fails nor uses
// up an attempt (ingest.max_attempts 1): it is retried and recorded once the database is back.
import path from 'node:path';
import test, { type Test } from 'tape';
import { makeCapture } from '../helpers/capture-files.ts';
import { startCluster, WEBHOOK_TOKEN, type Cluster, type ClusterNode } from '../helpers/cluster.ts';
import { postgresOnly } from '../helpers/dialect.ts';
import { HealthSampler, ReportStream, reportsNotOnce, statusCounts } from '../helpers/fault-watch.ts';
import { fixture } from '../helpers/fixture.ts';
import { http } from '../helpers/http.ts';
import { waitFor } from '../helpers/jobs.ts';
import { startPgServer, type PgServer } from '../helpers/pg-server.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { minioEvent } from '../helpers/webhook.ts';

const WHY = "a PostgreSQL server's restart and stop: SQLite has no server";
const NET = { addr: '10.144.140.2', gw: '10.144.140.1', cidr: '10.144.140.0/24' };
const files = tmpDir('rigd-pgrestart-files-');
let server: PgServer;
let c: Cluster;
let a: ClusterNode;

const setup = fixture(async () => {
  server = await startPgServer();
  c = await startCluster({
    ids: ['node-a'],
    databaseUrl: server.url(),
    rigNet: NET,
    // One attempt: an import the outage broke must not be charged for it.
    config: { ingest: { max_attempts: 1, concurrency: 1, read_bytes_per_s: 4 * 1024 * 1024 } },
  });
  a = c.node('node-a');
});

/** The capture's job once it is done or failed (read from the database: no session needed). */
function settledJob(id: number, timeoutMs: number) {
  return waitFor(
    async () => {
      const [job] = await c.query<JobRow>('SELECT state, attempts, progress, last_error FROM jobs WHERE id = (SELECT job_id FROM captures WHERE id = $1)', [id]);
      return job && (job.state === 'done' || job.state === 'failed') ? job : null;
    },
    timeoutMs,
    `capture ${id}'s job to settle`,
    250,
  );
}

test.onFinish(() => {
  void (async () => {
    await c?.close();
    server?.close();
  })();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** /healthz 200 with every named part ok (the dedicated connections back too). */
function healthy(n: ClusterNode, timeoutMs = 60_000) {
  return waitFor(
    async () => {
      const res = await http(`${n.url}/healthz`);
      const checks = res.json().checks as Record<string, string>;
      return res.status === 200 && checks.listen === 'ok' && checks.capture_store === 'ok' ? checks : null;
    },
    timeoutMs,
    `${n.id}'s /healthz to be 200 with listen and capture_store ok`,
    250,
  );
}

function fail(t: Test, err: unknown) {
  t.fail(`${(err as Error).message}\n${c ? c.outputs() : ''}`);
}

test('/healthz names the database, its writes, LISTEN, the capture store and storage', async (t) => {
  if (postgresOnly(t, WHY)) return;
  try {
    await setup();
    const checks = await healthy(a);
    for (const name of ['database', 'database_write', 'listen', 'capture_store', 'storage']) t.equal(checks[name], 'ok', `${name}: ok`);
  } catch (err) {
    fail(t, err);
  }
});

test('pg_ctl stop for 6 s: rigs get 503 text/plain, /healthz 503 all along, one log line; after start everything heals, every Ok stored once', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  const reports = new ReportStream(c, [a], { prefix: 'stop', rigs: 10 });
  const health = new HealthSampler([a]);
  let stopped = 0;
  let starting = 0;
  let started = 0;
  try {
    await waitFor(() => reports.acknowledged().length >= 16 || null, 60_000, 'reports before the stop', 50);
    server.stop();
    stopped = Date.now();
    await sleep(6000);
    // Stopped for 6 s at least, and until the samplers saw it (a /healthz or a report answered
    // while the server is down can take seconds on a busy machine): what is judged below is there.
    await waitFor(
      () => (health.samples.filter((s) => s.at > stopped + 1000).length >= 5 && reports.answers.some((r) => r.at > stopped + 1000)) || null,
      60_000,
      '5 /healthz samples and a report answered while the server is stopped',
      50,
    );
    starting = Date.now();
    server.start();
    started = Date.now();
    await healthy(a);
    const back = Date.now();
    const before = reports.acknowledged().length;
    await waitFor(() => reports.acknowledged().length >= before + 16 || null, 60_000, 'reports after the start', 50);
    // The sampler polls one request at a time: the second of its samples completed after /healthz was
    // seen healthy was also sent after, so its last one is not one still sent during the outage.
    await waitFor(() => health.samples.filter((s) => s.at > back).length >= 2 || null, 60_000, "the sampler's /healthz after the start", 50);
  } catch (err) {
    fail(t, err);
  } finally {
    await reports.stop();
    await health.stop();
  }
  const during = reports.answers.filter((r) => r.at > stopped + 1000 && r.at < starting);
  t.deepEqual(Object.keys(statusCounts(reports.answers)).sort(), ['200', '503'], `reports answered 200 or 503, nothing else: ${JSON.stringify(statusCounts(reports.answers))}`);
  t.ok(during.length > 0 && during.every((r) => r.status === 503), `every report while the server was stopped: 503 (${during.length})`);
  const refused = reports.answers.filter((r) => r.status === 503);
  t.ok(refused.every((r) => /^text\/plain/.test(r.type) && /database/.test(r.body) && r.body.trim().split('\n').length === 1), `each 503 is one text/plain line: ${JSON.stringify(refused[0]?.body)}`);
  const down = health.samples.filter((s) => s.at > stopped + 1000 && s.at < starting);
  t.ok(down.length >= 5, `${down.length} /healthz samples while stopped`);
  t.ok(down.every((s) => s.status === 503 && s.checks.database !== 'ok'), '/healthz 503 naming the database in each of them');
  const after = health.samples.filter((s) => s.at > started);
  t.equal(after.at(-1)?.status, 200, '/healthz 200 again once the server is back');
  const { missing, twice } = await reportsNotOnce(c, reports.acknowledged(), 'stop');
  t.deepEqual(missing, [], `every one of ${reports.acknowledged().length} acknowledged reports stored exactly once`);
  t.deepEqual(twice, [], 'no report stored twice');
  const log = a.output();
  const outageLines = log.split('\n').filter((l) => l.includes('database unavailable: requests answer 503')).length;
  t.ok(outageLines >= 1 && outageLines <= 2, `one log line for the outage's 503s (${outageLines}), not one per request (${refused.length})`);
  t.doesNotMatch(log, /"stack"|request failed|"level":(50|60)[,}]/, 'no stack trace, no "request failed", no error-level line');
});

test('pg_ctl restart: LISTEN, the duties lock and the capture store come back by themselves; an import after it works', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  try {
    server.restart();
    await healthy(a);
    const sessions = await waitFor(
      async () => {
        const rows = await server.query<{ app: string; n: number }>("SELECT regexp_replace(application_name, '^rigd duties .+$', 'rigd duties') AS app, count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE 'rigd %' GROUP BY 1");
        const by = Object.fromEntries(rows.map((r) => [r.app, Number(r.n)]));
        return by['rigd listen'] === 1 && by['rigd duties'] === 1 && by['rigd capture store'] === 1 ? by : null;
      },
      60_000,
      'the dedicated connections back',
      250,
    );
    t.deepEqual([sessions['rigd listen'], sessions['rigd duties'], sessions['rigd capture store']], [1, 1, 1], 'one LISTEN, one duties and one capture store connection again');
    const locks = await server.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND s.application_name LIKE 'rigd duties %'");
    t.equal(Number(locks[0]?.n), 1, 'the duties lock is held again');
    const made = await makeCapture(path.join(files, 'after.sqlite'), { tables: [{ name: 'after_rows', columns: [{ name: 'a', type: 'INTEGER' }], rows: 500 }] });
    const { etag, size } = await c.putObject('rig1/after.sqlite', made.path);
    const res = await http(`${a.url}/api/v1/webhooks/capture_uploaded`, { json: minioEvent('rig1/after.sqlite', etag, size), headers: { authorization: `Bearer ${WEBHOOK_TOKEN}` } });
    t.equal(res.status, 200, 'queued');
    const id = Number(res.json().data.objects?.[0]?.capture?.id);
    const done = await settledJob(id, 120_000);
    t.equal(done.state, 'done', `a capture imported after the restart is ingested (the store connection healed): ${done.last_error ?? ''}`);
    const rows = await server.query<{ n: number }>('SELECT count(*)::int AS n FROM rigd_captures.after_rows WHERE capture_id = $1', [id]);
    t.equal(Number(rows[0]?.n), 500, 'its 500 rows, once');
  } catch (err) {
    fail(t, err);
  }
});

interface JobRow {
  state: string;
  attempts: number;
  progress: string | null;
  last_error: string | null;
}

test('pg_ctl stop in the middle of an import (max_attempts 1): no attempt used up, ingested once the server is back', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  try {
    const made = await makeCapture(path.join(files, 'cut.sqlite'), {
      tables: [{ name: 'cut_readings', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'sensor', type: 'TEXT' }, { name: 'value', type: 'REAL' }], rows: 120_000 }],
    });
    const { etag, size } = await c.putObject('rig2/cut.sqlite', made.path);
    const res = await http(`${a.url}/api/v1/webhooks/capture_uploaded`, { json: minioEvent('rig2/cut.sqlite', etag, size), headers: { authorization: `Bearer ${WEBHOOK_TOKEN}` } });
    const id = Number(res.json().data.objects?.[0]?.capture?.id);
    const jobSql = 'SELECT state, attempts, progress, last_error FROM jobs WHERE id = (SELECT job_id FROM captures WHERE id = $1)';
    const running = await waitFor(
      async () => {
        const [job] = await c.query<JobRow>(jobSql, [id]);
        if (job && job.state !== 'queued' && job.state !== 'running') return job;
        const progress = job?.progress ? (JSON.parse(job.progress) as { step?: string; rows?: number }) : null;
        return job?.state === 'running' && progress?.step === 'import' && Number(progress.rows) > 0 ? job : null;
      },
      120_000,
      'the import to be under way',
      25,
    );
    t.equal(running.state, 'running', `the import is under way (${running.progress})`);
    server.stop();
    await sleep(4000);
    server.start();
    const job = await settledJob(id, 180_000);
    t.deepEqual([job.state, job.attempts], ['done', 1], `ingested after the outage, attempts 1 with one allowed: the outage used up no attempt (last error: ${job.last_error})`);
    const rows = await server.query<{ n: number }>('SELECT count(*)::int AS n FROM rigd_captures.cut_readings WHERE capture_id = $1', [id]);
    t.equal(Number(rows[0]?.n), 120_000, 'every row once');
    t.doesNotMatch(a.output(), /"stack"/, 'no stack trace in the log');
  } catch (err) {
    fail(t, err);
  }
});

test('teardown: the node stops cleanly on SIGTERM', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  const { code } = await a.stop('SIGTERM');
  t.equal(code, 0, 'exit 0');
  await c.close();
  server.close();
});
