// test: alone (cluster faults through pgbouncer)
// Two `rigd serve` nodes through Debian's pgbouncer in transaction mode (database.url), with
// database.direct_url on the server itself for what needs a session (LISTEN, the duties lock,
// migrations, the capture store's prepared statements). Both start at once on an empty database
// (migrated once); reports split across them are each stored once; a token from one works on the
// other; exactly one node holds the duties lock; a capture is imported with every row once; the
// pooler really pools (rigd's pooled work runs on pgbouncer's server connections). Skipped, saying
// why, only when pgbouncer is not installed and this is not CI.
import path from 'node:path';
import test, { type Test } from 'tape';
import { makeCapture } from '../helpers/capture-files.ts';
import { rigd } from '../helpers/cli.ts';
import { startCluster, WEBHOOK_TOKEN, type Cluster, type ClusterNode } from '../helpers/cluster.ts';
import { postgresOnly } from '../helpers/dialect.ts';
import { statusCounts } from '../helpers/fault-watch.ts';
import { fixture } from '../helpers/fixture.ts';
import { http } from '../helpers/http.ts';
import { waitFor } from '../helpers/jobs.ts';
import { pgbouncerBinary, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.ts';
import { startPgServer, type PgServer } from '../helpers/pg-server.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { minioEvent } from '../helpers/webhook.ts';

const WHY = 'a PostgreSQL pooler in front of the server: SQLite has none';
const NET = { addr: '10.144.143.2', gw: '10.144.143.1', cidr: '10.144.143.0/24' };
const files = tmpDir('rigd-pgbouncer-files-');
let server: PgServer;
let bouncer: PgBouncer;
let c: Cluster;
let a: ClusterNode;
let b: ClusterNode;

/** True (and a passing line saying why) when this file cannot run here. */
function skip(t: Test): boolean {
  if (postgresOnly(t, WHY)) return true;
  if (pgbouncerBinary() || process.env.CI) return false;
  t.pass('SKIPPED: pgbouncer is not installed (apt-get install pgbouncer); CI installs it and runs this file');
  return true;
}

const setup = fixture(async () => {
  server = await startPgServer();
  bouncer = await startPgBouncer(server.port);
  c = await startCluster({ databaseUrl: bouncer.url, rigNet: NET, config: { database: { direct_url: server.url() } }, start: false });
  [a, b] = [c.node('node-a'), c.node('node-b')];
});

test.onFinish(() => {
  void (async () => {
    await c?.close();
    await bouncer?.close();
    server?.close();
  })();
});

function fail(t: Test, err: unknown) {
  t.fail(`${(err as Error).message}\n${c ? c.outputs() : ''}\n--- pgbouncer ---\n${bouncer?.log().slice(-2000) ?? ''}`);
}

test('two nodes start at once through pgbouncer (transaction mode): migrated once, both healthy', async (t) => {
  if (skip(t)) return;
  try {
    await setup();
    await Promise.all(c.nodes.map((n) => n.start()));
    const names = await server.query<{ name: string }>('SELECT name FROM schema_migrations');
    t.equal(new Set(names.map((r) => r.name)).size, names.length, `${names.length} migrations, each recorded once`);
    for (const n of c.nodes) {
      const res = await waitFor(async () => {
        const h = await http(`${n.url}/healthz`);
        return h.status === 200 ? h : null;
      }, 60_000, `${n.id} healthy`, 250);
      t.equal(res.json().checks.listen, 'ok', `${n.id}: /healthz 200, LISTEN ok (on direct_url)`);
    }
  } catch (err) {
    fail(t, err);
  }
});

test('reports split across the nodes through the pooler: every Ok stored once; a token from A works on B', async (t) => {
  if (skip(t)) return;
  await setup();
  try {
    const reqs = c.nodes.flatMap((n) =>
      Array.from({ length: 60 }, (_, i) => ({
        url: `${n.rigUrl}/api/v1/rigs/pb-rig${i % 10}`,
        method: 'PUT',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `rig_serial=SN-${i % 10}&gpsd_latitude=47.37&gpsd_longitude=8.54&local_ip=192.168.8.20&software_version=pb-${n.id}-${i}&git_branch=main`,
      })),
    );
    const answers = await c.net.requestAll('rig', reqs, { concurrency: 20 });
    t.deepEqual(statusCounts(answers), { 200: reqs.length }, `${reqs.length} x 200`);
    const rows = await server.query<{ version: string; n: number }>("SELECT version, count(*)::int AS n FROM rig_reports WHERE version LIKE 'pb-%' GROUP BY version");
    t.equal(rows.length, reqs.length, 'every acknowledged report is a row');
    t.ok(rows.every((r) => Number(r.n) === 1), 'each exactly once');
    // The node's config, with this file's pooler in the environment (the CLI helper would name the suite's database).
    const add = await rigd(['--config', a.configFile, 'user', 'add', 'ana', '--email', 'ana@example.com', '--password-stdin'], {
      env: { RIGD_DATABASE_URL: bouncer.url, RIGD_DATABASE_DIRECT_URL: server.url() },
      input: 'ana-password-123',
      timeoutMs: 60_000,
    });
    t.equal(add.code, 0, `rigd user add through the pooler: ${add.stderr.trim()}`);
    const login = await http(`${a.url}/api/v1/sessions`, { json: { login: 'ana', password: 'ana-password-123' } });
    t.equal(login.status, 200, 'login on A');
    const onB = await http(`${b.url}/api/v1/captures`, { headers: { authorization: login.json().token as string } });
    t.equal(onB.status, 200, "B takes A's token");
  } catch (err) {
    fail(t, err);
  }
});

test('exactly one node holds the duties lock (a session lock on direct_url, never on a pooled connection)', async (t) => {
  if (skip(t)) return;
  await setup();
  try {
    const held = await waitFor(
      async () => {
        const rows = await server.query<{ n: number; sessions: number }>(
          `SELECT (SELECT count(*)::int FROM pg_locks WHERE locktype = 'advisory' AND granted AND objid = 1 AND classid = ${0x72696764}) AS n,
                  (SELECT count(*)::int FROM pg_stat_activity WHERE application_name LIKE 'rigd duties %') AS sessions`,
        );
        return rows[0]?.sessions === 2 ? rows[0] : null;
      },
      60_000,
      'both nodes trying the duties lock',
      250,
    );
    t.deepEqual([Number(held.n), Number(held.sessions)], [1, 2], 'two duties sessions, one lock held');
    const holding = [a, b].map((n) => (n.output().match(/this node runs the cluster duties/g) ?? []).length);
    t.equal(holding.reduce((x, y) => x + y, 0), 1, `one node says it runs the duties (${holding.join(', ')})`);
  } catch (err) {
    fail(t, err);
  }
});

test('a capture is imported through the nodes (store on direct_url): every row once', async (t) => {
  if (skip(t)) return;
  await setup();
  try {
    const made = await makeCapture(path.join(files, 'pb.sqlite'), { tables: [{ name: 'pb_rows', columns: [{ name: 'a', type: 'INTEGER' }, { name: 'b', type: 'TEXT' }], rows: 3000 }] });
    const { etag, size } = await c.putObject('rig3/pb.sqlite', made.path);
    const res = await http(`${b.url}/api/v1/webhooks/capture_uploaded`, { json: minioEvent('rig3/pb.sqlite', etag, size), headers: { authorization: `Bearer ${WEBHOOK_TOKEN}` } });
    t.equal(res.status, 200, 'queued on B');
    const id = Number(res.json().data.objects?.[0]?.capture?.id);
    const job = await waitFor(
      async () => {
        const [j] = await server.query<{ state: string; last_error: string | null }>('SELECT state, last_error FROM jobs WHERE id = (SELECT job_id FROM captures WHERE id = $1)', [id]);
        return j && (j.state === 'done' || j.state === 'failed') ? j : null;
      },
      120_000,
      'the import to settle',
      250,
    );
    t.equal(job.state, 'done', `ingested ${job.last_error ?? ''}`);
    const rows = await server.query<{ n: number }>('SELECT count(*)::int AS n FROM rigd_captures.pb_rows WHERE capture_id = $1', [id]);
    t.equal(Number(rows[0]?.n), 3000, '3000 rows, once');
    const pooled = await server.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'rigd'");
    t.ok(Number(pooled[0]?.n) <= 8, `rigd's pooled work runs on pgbouncer's server connections (${pooled[0]?.n} of its pool size 8, for two nodes of pool_max 10)`);
    t.doesNotMatch(a.output() + b.output(), /prepared statement|"stack"/, 'no prepared-statement error, no stack trace');
  } catch (err) {
    fail(t, err);
  }
});

test('rigd doctor: through the pooler without direct_url it warns naming database.direct_url; with it, no such warning', async (t) => {
  if (skip(t)) return;
  await setup();
  type Doctor = { checks: { check: string; status: string; message: string; fix?: string }[] };
  const doctor = (direct: string) =>
    rigd(['--config', a.configFile, 'doctor', '--json'], { env: { RIGD_DATABASE_URL: bouncer.url, RIGD_DATABASE_DIRECT_URL: direct }, timeoutMs: 60_000 });
  const without = JSON.parse((await doctor('')).stdout) as Doctor;
  const pooler = without.checks.find((x) => x.check === 'pooler');
  t.equal(pooler?.status, 'warn', `warns: ${pooler?.message}`);
  t.match(String(pooler?.fix), /database\.direct_url/, `names database.direct_url: ${pooler?.fix}`);
  const withDirect = JSON.parse((await doctor(server.url())).stdout) as Doctor;
  t.equal(withDirect.checks.find((x) => x.check === 'pooler'), undefined, 'with direct_url set: no pooler warning');
  t.equal(withDirect.checks.find((x) => x.check === 'database')?.status, 'ok', 'the database check passes through the pooler');
});

test('teardown: both nodes stop cleanly on SIGTERM', async (t) => {
  if (skip(t)) return;
  await setup();
  for (const n of c.nodes) {
    const { code } = await n.stop('SIGTERM');
    t.equal(code, 0, `${n.id}: exit 0`);
  }
  await c.close();
  await bouncer.close();
  server.close();
});
