// test: alone (SIGSTOP of PostgreSQL under a running cluster)
// Locks cannot be held hostage. Two `rigd serve` nodes on one PostgreSQL server of this file's own,
// with the shipped idle_in_transaction_timeout_s (4) and database.lock_timeout_s at 10 instead of 5:
// the shipped one-second margin between them is what a loaded machine can take from the server's
// timers, and the rule under test (a stalled node's locks go before another node's write waits
// lock_timeout_s) holds with any margin. Without the idle timeout B's reports would still fail. Node A is
// stopped (SIGSTOP: a long GC pause, a frozen VM) while its open report transaction holds row
// locks on `rigs`: the server ends A's idle transaction, and node B's reports for the same rigs all
// answer while A is still stopped. A session that locks rigs against writers (longer than the lock
// timeout) makes a node answer 503 database_busy and say so in /healthz; both recover by themselves.
// Every acknowledged report is stored exactly once.
import { readFileSync } from 'node:fs';
import test, { type Test } from 'tape';
import pg from 'pg';
import { startCluster, type Cluster, type ClusterNode } from '../helpers/cluster.ts';
import { postgresOnly } from '../helpers/dialect.ts';
import { HealthSampler, ReportStream, reportsNotOnce, statusCounts } from '../helpers/fault-watch.ts';
import { fixture } from '../helpers/fixture.ts';
import { http } from '../helpers/http.ts';
import { waitFor } from '../helpers/jobs.ts';
import { startPgServer, type PgServer } from '../helpers/pg-server.ts';

const WHY = "PostgreSQL's row locks between nodes: SQLite is one node";
const NET = { addr: '10.144.142.2', gw: '10.144.142.1', cidr: '10.144.142.0/24' };
let server: PgServer;
let c: Cluster;
let a: ClusterNode;
let b: ClusterNode;

const setup = fixture(async () => {
  server = await startPgServer();
  c = await startCluster({ databaseUrl: server.url(), rigNet: NET, config: { database: { lock_timeout_s: 10, idle_in_transaction_timeout_s: 4 } } });
  [a, b] = [c.node('node-a'), c.node('node-b')];
});

test.onFinish(() => {
  void (async () => {
    if (a?.running()) process.kill(a.pid()!, 'SIGCONT');
    await c?.close();
    server?.close();
  })();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function fail(t: Test, err: unknown) {
  t.fail(`${(err as Error).message}\n${c ? c.outputs() : ''}`);
}

/** Backends idle in a transaction that holds a write lock on rigs (a report batch stopped before COMMIT). */
async function stalledHolders(): Promise<number> {
  const rows = await server.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
      WHERE l.relation = 'rigs'::regclass AND l.mode = 'RowExclusiveLock' AND l.granted AND s.state = 'idle in transaction'`,
  );
  return Number(rows[0]?.n);
}

test('node A stopped (SIGSTOP) holding rigs row locks: node B reports for the same rigs all answer while A is still stopped', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  const toA = new ReportStream(c, [a], { prefix: 'stall-a', rigs: 4, perBatch: 24, timeoutMs: 60_000 });
  let caught = false;
  let tries = 0;
  let resumed = 0;
  const health = new HealthSampler([b]);
  let fromB: Awaited<ReturnType<typeof c.net.requestAll>> = [];
  let stoppedAt = 0;
  try {
    await waitFor(() => toA.acknowledged().length >= 24 || null, 60_000, 'reports to A', 50);
    // Stop A until it is caught between a batch's writes and its COMMIT.
    for (; tries < 200 && !caught; tries++) {
      process.kill(a.pid()!, 'SIGSTOP');
      stoppedAt = Date.now();
      caught = (await stalledHolders()) > 0;
      if (!caught) {
        process.kill(a.pid()!, 'SIGCONT');
        await sleep(5 + (tries % 7) * 3);
      }
    }
    t.ok(caught, `node A stopped with an open transaction holding rigs locks (try ${tries})`);
    if (!caught) return;
    fromB = await c.net.requestAll(
      'rig',
      Array.from({ length: 16 }, (_, i) => ({
        url: `${b.rigUrl}/api/v1/rigs/stall-a-rig${i % 4}`,
        method: 'PUT',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `rig_serial=SN-stall-a-rig${i % 4}&gpsd_latitude=1&gpsd_longitude=2&local_ip=192.168.8.20&software_version=stall-b-${i}&git_branch=main`,
        timeoutMs: 60_000,
      })),
      { concurrency: 16 },
    );
    // /proc/PID/stat's third field: T while stopped by a signal.
    const state = readFileSync(`/proc/${a.pid()}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[0];
    t.equal(state, 'T', `every report to B answered while A is still stopped (${Math.round((Date.now() - stoppedAt) / 1000)} s after the stop)`);
    t.deepEqual(statusCounts(fromB), { 200: 16 }, `B: 16 x 200 for the rigs A had locked: ${JSON.stringify(statusCounts(fromB))} ${fromB.find((r) => r.status !== 200)?.body ?? ''}`);
    t.equal(await stalledHolders(), 0, "the server ended A's idle transaction (idle_in_transaction_session_timeout)");
  } catch (err) {
    fail(t, err);
  } finally {
    if (a.running()) process.kill(a.pid()!, 'SIGCONT');
    resumed = Date.now();
  }
  try {
    await waitFor(async () => ((await http(`${a.url}/healthz`)).status === 200) || null, 60_000, "A's /healthz 200 after SIGCONT", 250);
    const before = toA.acknowledged().length;
    await waitFor(() => toA.answers.some((r) => r.at > resumed && r.status === 200 && toA.acknowledged().length > before) || null, 60_000, 'A answering 200 again', 50);
  } catch (err) {
    fail(t, err);
  } finally {
    await toA.stop();
    await health.stop();
  }
  t.ok(toA.answers.every((r) => r.status === 200 || r.status === 503), `A answered 200 or 503 (its cut batch), nothing else: ${JSON.stringify(statusCounts(toA.answers))}`);
  const bHealth = health.samples.filter((s) => s.at > stoppedAt && s.at < resumed);
  t.ok(bHealth.length > 0 && bHealth.every((s) => s.status === 200), `B's /healthz 200 all along while A was stopped (${bHealth.length} samples)`);
  const fromBTagged = fromB.map((r, i) => ({ tag: `stall-b-${i}`, status: r.status, body: r.body })).filter((r) => r.status === 200);
  const acked = [...toA.acknowledged(), ...fromBTagged.map((r) => ({ ...r, rig: '', node: 'node-b', type: '', retryAfter: undefined, at: 0 }))];
  const onceA = await reportsNotOnce(c, toA.acknowledged(), 'stall-a');
  const onceB = await reportsNotOnce(c, acked.filter((r) => r.tag.startsWith('stall-b')), 'stall-b');
  t.deepEqual([onceA, onceB], [{ missing: [], twice: [] }, { missing: [], twice: [] }], `every one of ${acked.length} acknowledged reports stored exactly once`);
  t.doesNotMatch(a.output() + b.output(), /"stack"|request failed/, 'no stack trace in either log');
});

test('a session locking rigs against writers for longer than lock_timeout: 503 database_busy, /healthz says so; both recover', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  const reports = new ReportStream(c, [b], { prefix: 'lock', rigs: 4, perBatch: 4 });
  const health = new HealthSampler([b]);
  const holder = new pg.Client({ connectionString: server.url() });
  let locked = 0;
  let released = 0;
  try {
    await waitFor(() => reports.acknowledged().length >= 8 || null, 60_000, 'reports before', 50);
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE rigs IN SHARE MODE');
    locked = Date.now();
    await waitFor(() => reports.answers.filter((r) => r.at > locked && r.status === 503).length >= 4 || null, 60_000, '503s while rigs is locked', 50);
    await waitFor(() => health.samples.some((s) => s.at > locked && s.status === 503) || null, 60_000, '/healthz 503 while rigs is locked', 50);
    await holder.query('ROLLBACK');
    released = Date.now();
    await waitFor(async () => ((await http(`${b.url}/healthz`)).status === 200) || null, 60_000, '/healthz 200 after', 250);
    await waitFor(() => reports.answers.some((r) => r.at > released && r.status === 200) || null, 60_000, 'reports answering 200 again', 50);
    // The sampler polls every 250 ms, one request at a time: recovery can be seen above before it
    // has a sample of its own; the second sample completed after the release was also sent after it.
    await waitFor(() => health.samples.filter((s) => s.at > released).length >= 2 || null, 60_000, "the sampler's /healthz after the release", 50);
  } catch (err) {
    fail(t, err);
  } finally {
    await holder.end().catch(() => undefined);
    await reports.stop();
    await health.stop();
  }
  const busy = reports.answers.filter((r) => r.status === 503);
  t.ok(busy.length > 0 && busy.every((r) => /^text\/plain/.test(r.type) && /lock or statement timeout/.test(r.body) && r.retryAfter === '1'), `503 database_busy, one text/plain line with Retry-After: ${JSON.stringify(busy[0]?.body)}`);
  t.deepEqual(Object.keys(statusCounts(reports.answers)).sort(), ['200', '503'], `nothing but 200 and 503: ${JSON.stringify(statusCounts(reports.answers))}`);
  const said = health.samples.find((s) => s.at > locked && s.at < released && s.status === 503);
  t.ok(said && Object.entries(said.checks).some(([k, v]) => k.startsWith('database') && v !== 'ok'), `/healthz 503 naming the database while it takes no report: ${JSON.stringify(said?.checks)}`);
  const after = health.samples.filter((s) => s.at > released);
  t.equal(health.samples.at(-1)?.status, 200, `/healthz 200 again after: ${JSON.stringify(after.map((s) => ({ ms: s.at - released, status: s.status, checks: s.status === 200 ? undefined : s.checks })))}`);
  const { missing, twice } = await reportsNotOnce(c, reports.acknowledged(), 'lock');
  t.deepEqual([missing, twice], [[], []], `every one of ${reports.acknowledged().length} acknowledged reports stored exactly once`);
});

test('teardown: both nodes stop cleanly on SIGTERM', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  for (const n of c.nodes) {
    const { code } = await n.stop('SIGTERM');
    t.equal(code, 0, `${n.id}: exit 0`);
  }
  await c.close();
  server.close();
});
