// test: alone (PostgreSQL server faults under a running cluster)
// The connection budget against a server with a small max_connections (20, 3 of them reserved for
// superusers): rigd serve with database.pool_max 4 (7 connections with its dedicated ones), logging
// in as an ordinary role. `rigd doctor` compares pool_max with max_connections. When the server has
// no connection left for rigd (every free slot taken by other clients, rigd's pooled connections
// ended), reports answer 503 with Retry-After at once (the server refuses: too many clients, no
// wait for the pool), /healthz says so, and once connections are free again the node recovers by
// itself; every acknowledged report is stored exactly once.
import test from 'tape';
import pg from 'pg';
import { rigd } from '../helpers/cli.ts';
import { startCluster, type Cluster, type ClusterNode } from '../helpers/cluster.ts';
import { postgresOnly } from '../helpers/dialect.ts';
import { HealthSampler, ReportStream, reportsNotOnce, statusCounts } from '../helpers/fault-watch.ts';
import { fixture } from '../helpers/fixture.ts';
import { http } from '../helpers/http.ts';
import { waitFor } from '../helpers/jobs.ts';
import { startPgServer, type PgServer } from '../helpers/pg-server.ts';

const WHY = "PostgreSQL's max_connections: SQLite has no server";
const NET = { addr: '10.144.141.2', gw: '10.144.141.1', cidr: '10.144.141.0/24' };
const POOL_MAX = 4;
let server: PgServer;
let c: Cluster;
let a: ClusterNode;
/** The role rigd logs in as (not a superuser: the reserved connections are not its). */
let rigdUrl = '';

const setup = fixture(async () => {
  server = await startPgServer({ settings: { max_connections: 20, superuser_reserved_connections: 3, log_connections: 'on', log_disconnections: 'on', log_line_prefix: "'%m [%p] %a '" } });
  await server.query('CREATE ROLE rigd LOGIN', [], 'postgres');
  await server.query('ALTER DATABASE rigd OWNER TO rigd', [], 'postgres');
  await server.query('ALTER SCHEMA public OWNER TO rigd');
  rigdUrl = server.url().replace('postgres@', 'rigd@');
  c = await startCluster({ ids: ['node-a'], databaseUrl: rigdUrl, rigNet: NET, config: {
      database: { pool_max: POOL_MAX },
      // The server ends the duties session after three heartbeats without a word from its node (a
      // frozen node loses the duties). At 1 s, a 3 s stall of a loaded machine would free that
      // session's slot in the middle of the outage below, and rigd would rightly take it.
      cluster: { heartbeat_s: 5 },
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

interface Doctor {
  ok: boolean;
  checks: { check: string; status: string; message: string; fix?: string }[];
}

test('rigd doctor compares database.pool_max (and the dedicated connections) with max_connections', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  // The node's config file, with this file's server in the environment (the CLI helper would name the suite's).
  const doctor = (env: Record<string, string> = {}) =>
    rigd(['--config', a.configFile, 'doctor', '--json'], { env: { RIGD_DATABASE_URL: rigdUrl, ...env }, timeoutMs: 60_000 });
  const good = await doctor();
  const budget = (JSON.parse(good.stdout) as Doctor).checks.find((x) => x.check === 'connections');
  t.equal(budget?.status, 'ok', `pool_max ${POOL_MAX}: ok (${budget?.message})`);
  t.match(String(budget?.message), /1 node\(s\) x \(pool_max 4 \+ 3 dedicated\).*the server takes 17/, 'names the per-node total and what the server takes');
  t.equal((JSON.parse(good.stdout) as Doctor).checks.find((x) => x.check === 'pooler'), undefined, 'straight to the server: no pooler warning');
  const over = await doctor({ RIGD_DATABASE_POOL_MAX: '16' });
  const overBudget = (JSON.parse(over.stdout) as Doctor).checks.find((x) => x.check === 'connections');
  t.equal(overBudget?.status, 'fail', `pool_max 16 on a server that takes 17: fail (${overBudget?.message})`);
  t.match(String(overBudget?.fix), /database\.pool_max.*max_connections/, `the fix names database.pool_max and max_connections: ${overBudget?.fix}`);
  t.equal(over.code, 1, 'doctor exits 1');
});

/** Opens connections as rigd's role until the server refuses one (too many clients): all of them. */
async function fill(into: pg.Client[]): Promise<string> {
  for (;;) {
    const batch = Array.from({ length: 4 }, () => new pg.Client({ connectionString: rigdUrl, application_name: 'filler' }));
    const results = await Promise.allSettled(batch.map((cl) => (cl.on('error', () => undefined), cl.connect().then(() => cl))));
    let refused = '';
    for (const r of results) {
      if (r.status === 'fulfilled') into.push(r.value);
      else refused = `${(r.reason as { code?: string }).code}: ${(r.reason as Error).message}`;
    }
    if (refused) return refused;
  }
}

test('no connection left for rigd: 503 with Retry-After at once, /healthz 503; free again: the node recovers by itself', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  const fillers: pg.Client[] = [];
  const reports = new ReportStream(c, [a], { prefix: 'budget', rigs: 6, perBatch: 4 });
  const health = new HealthSampler([a]);
  let full = 0;
  let freed = 0;
  // When the first slot was given back: answers after it may have had a connection (the fillers end one by one).
  let freeing = 0;
  let sessions = '';
  try {
    await waitFor(() => reports.acknowledged().length >= 12 || null, 60_000, 'reports before', 50);
    // Take every slot, then end rigd's pooled connections and take theirs too, until rigd has none.
    let refusal = await fill(fillers);
    t.match(refusal, /^53300/, `the server refuses more: ${refusal}`);
    const pooled = () => server.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'rigd'").then((r) => Number(r[0]?.n));
    for (let i = 0; i < 20 && (await pooled()) > 0; i++) {
      await server.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'rigd'");
      refusal = await fill(fillers);
    }
    t.equal(await pooled(), 0, `rigd holds no pooled connection; ${fillers.length} others hold every slot`);
    full = Date.now();
    // Past the first second of the outage (the window checked below), so a fast machine cannot leave it empty.
    await waitFor(() => reports.answers.filter((r) => r.at > full + 1000 && r.status === 503).length >= 12 || null, 60_000, '503s while full', 50);
    await waitFor(() => health.samples.some((s) => s.at > full + 1000 && s.status === 503) || null, 60_000, '/healthz 503 while full', 50);
    sessions = JSON.stringify(await server.query("SELECT application_name AS name, state, count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' GROUP BY 1, 2 ORDER BY 1, 2"));
    freeing = Date.now();
    await Promise.all(fillers.splice(0).map((cl) => cl.end().catch(() => undefined)));
    freed = Date.now();
    await waitFor(
      async () => {
        const res = await http(`${a.url}/healthz`);
        return res.status === 200 || null;
      },
      60_000,
      '/healthz 200 after',
      250,
    );
    const before = reports.acknowledged().length;
    await waitFor(() => reports.acknowledged().length >= before + 12 || null, 60_000, 'reports after', 50);
    // The sampler polls one request at a time: its last sample can be one sent while the slots were
    // taken; the second sample completed after they were freed was also sent after.
    await waitFor(() => health.samples.filter((s) => s.at > freed).length >= 2 || null, 60_000, "the sampler's /healthz after the slots were freed", 50);
  } catch (err) {
    t.fail(`${(err as Error).message}\n${c.outputs()}`);
  } finally {
    await Promise.all(fillers.map((cl) => cl.end().catch(() => undefined)));
    await reports.stop();
    await health.stop();
  }
  const whileFull = reports.answers.filter((r) => r.at > full + 1000 && r.at < freeing);
  t.ok(whileFull.length > 0 && whileFull.every((r) => r.status === 503), `every report while full: 503 (${JSON.stringify(statusCounts(whileFull))})`);
  t.ok(whileFull.every((r) => r.retryAfter === '1' && /^text\/plain/.test(r.type) && /database/.test(r.body)), 'each with Retry-After: 1 and one text/plain line');
  t.deepEqual(Object.keys(statusCounts(reports.answers)).sort(), ['200', '503'], `nothing but 200 and 503: ${JSON.stringify(statusCounts(reports.answers))}`);
  const log = a.output();
  t.match(log, /database unavailable: requests answer 503[^\n]*(too many|remaining connection slots)/, 'the log line names the cause: the server has no connection left (refused at once, not a wait for the pool)');
  // The last sample answered before the first slot was given back: what /healthz said while the fault lasted.
  const sample = health.samples.filter((s) => s.at > full + 1000 && s.at < freeing).at(-1);
  t.equal(sample?.status, 503, `/healthz 503 while full: ${JSON.stringify(sample?.checks)}; the server's sessions then: ${sessions}; its log of connections ended meanwhile:\n${server.log().split('\n').filter((l) => /disconnection|FATAL|terminat/.test(l) && !/remaining connection slots/.test(l)).slice(-40).join('\n')}`);
  t.equal(health.samples.at(-1)?.status, 200, '/healthz 200 again after');
  t.ok(reports.answers.some((r) => r.at > freed && r.status === 200), 'reports answer 200 again: the node recovered by itself');
  const { missing, twice } = await reportsNotOnce(c, reports.acknowledged(), 'budget');
  t.deepEqual([missing, twice], [[], []], `every one of ${reports.acknowledged().length} acknowledged reports stored exactly once`);
  t.doesNotMatch(log, /"stack"|request failed/, 'no stack trace, no "request failed"');
});

test('teardown: the node stops cleanly on SIGTERM', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  const { code } = await a.stop('SIGTERM');
  t.equal(code, 0, 'exit 0');
  await c.close();
  server.close();
});
