// test: alone (pg_ctl stop under two running rigd serve; alert timing)
// A database outage is not a node down, nor the fleet gone dark: two `rigd serve` on a PostgreSQL
// server of this file's own, rigs reporting through both all along (503 while the server is
// stopped), a webhook receiver listening. The server stops for longer than a node's and a rig's
// silence threshold and starts again: no node_down, no rig_offline, no fleet_outage is opened and
// nothing of the kind is sent, although every heartbeat and report stopped meanwhile. A node killed
// (-9) during a second outage still gets its node_down once it stays silent after the database is
// back, and that incident stays open (unresolved, not sent again) through a third outage.
import test, { type Test } from 'tape';
import type { WebhookBody } from '../../../src/services/notify/message.ts';
import { startCluster, type Cluster, type ClusterNode } from '../../helpers/cluster.ts';
import { postgresOnly } from '../../helpers/dialect.ts';
import { ReportStream } from '../../helpers/fault-watch.ts';
import { fixture } from '../../helpers/fixture.ts';
import { http } from '../../helpers/http.ts';
import { sleep, waitFor } from '../../helpers/jobs.ts';
import { startPgServer, type PgServer } from '../../helpers/pg-server.ts';
import { startHttpSink, type HttpSink } from '../notify/sinks.ts';

const WHY = "a PostgreSQL server stopped under two nodes: SQLite has no server and one node";
const NET = { addr: '10.144.206.2', gw: '10.144.206.1', cidr: '10.144.206.0/24' };
// Heartbeats every 3 s: a node is down after 9 s of silence. Rigs are offline after 8 s of silence.
const HEARTBEAT_S = 3;
const STALE_MS = 3 * HEARTBEAT_S * 1000;
// Longer than both thresholds, and than both put together.
const OUTAGE_MS = 20_000;
const SECRET = 'whsec-db-outage-4b227777d4dd1fc61c6f884f48641d02';

let server: PgServer;
let hook: HttpSink;
let c: Cluster;
/** Rigs reporting to node-a all along, through both outages. */
let reports: ReportStream;
/** The gone rig's incident (notified again at every sweep) and node-b's node_down. */
let witnessId: number;
let downId: number;

const setup = fixture(async () => {
  server = await startPgServer();
  hook = await startHttpSink();
  c = await startCluster({
    databaseUrl: server.url(),
    rigNet: NET,
    config: {
      cluster: { heartbeat_s: HEARTBEAT_S },
      rigs: { online_after_s: 4, offline_after_s: 8 },
      alerts: { min_silence_s: 1, check_interval_s: 1, repeat_s: 1 },
      notify: { webhooks: [{ url: hook.url('/hooks/rigd'), secret: SECRET, events: ['*'] }], first_retry_s: 0.2 },
    },
  });
});

test.onFinish(() => {
  void (async () => {
    await c?.close();
    await hook?.close();
    server?.close();
  })();
});

const bodies = (): WebhookBody[] => hook.received.map((r) => JSON.parse(r.body.toString('utf8')) as WebhookBody);

type IncidentRow = { id: number; kind: string; subject: string | null; opened_at: Date; last_notified_at: Date };
const incidentRows = () => c.query<IncidentRow>('SELECT id, kind, subject, opened_at, last_notified_at FROM incidents ORDER BY id');

function healthy(n: ClusterNode) {
  return waitFor(
    async () => {
      const res = await http(`${n.url}/healthz`).catch(() => null);
      return res?.status === 200 || null;
    },
    60_000,
    `${n.id}'s /healthz to be 200`,
    250,
  );
}

/** Both nodes' heartbeats younger than a period (by the database's clock). */
function heartbeatsFresh(ids: string[]) {
  return waitFor(
    async () => {
      const rows = await c.query<{ instance_id: string }>(`SELECT instance_id FROM nodes WHERE stopped_at IS NULL AND heartbeat_at > now() - interval '${HEARTBEAT_S} seconds'`).catch(() => []);
      return ids.every((id) => rows.some((r) => r.instance_id === id)) || null;
    },
    60_000,
    `heartbeats of ${ids.join(', ')}`,
    250,
  );
}

/** A rig that reports three times from the namespace, then never again: its rig_offline repeats every sweep (repeat_s 1). */
async function goneRig(id: string): Promise<IncidentRow> {
  for (let i = 0; i < 3; i++) {
    const res = await c.net.request('rig', {
      url: `${c.node('node-a').rigUrl}/api/v1/rigs/${id}`,
      method: 'PUT',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `rig_serial=SN-${id}&gpsd_latitude=47.37&gpsd_longitude=8.54&local_ip=192.168.8.20&software_version=1.0&git_branch=main`,
    });
    if (res.status !== 200) throw new Error(`report of ${id}: ${res.status} ${res.body}`);
  }
  return waitFor(async () => (await incidentRows()).find((r) => r.kind === 'rig_offline' && r.subject === id), 60_000, `rig_offline for ${id}`, 250);
}

/** The database's now, once it answers. */
async function dbNow(): Promise<number> {
  const [row] = await c.query<{ now: Date }>('SELECT now() AS now');
  return new Date(row!.now).getTime();
}

/**
 * Until a sweep of the nodes ran `afterMs` past `from` (database clock): the witness rig's incident
 * was notified again then. Any false incident the outage could cause is opened by then.
 */
function sweptPast(witness: number, from: number, afterMs: number) {
  return waitFor(
    async () => {
      const row = (await incidentRows()).find((r) => r.id === witness);
      return row && new Date(row.last_notified_at).getTime() > from + afterMs ? row : null;
    },
    120_000,
    `a sweep ${afterMs} ms after the database came back`,
    250,
  );
}

function fail(t: Test, err: unknown) {
  t.fail(`${(err as Error).message}\n${c ? c.outputs() : ''}`);
}

const describe = (rows: { kind: string; subject: string | null }[]) => rows.map((r) => `${r.kind} ${r.subject ?? '-'}`);

test('PostgreSQL stopped longer than the node and rig thresholds: no node_down, no rig_offline, no fleet_outage, nothing sent', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  const a = c.node('node-a');
  const b = c.node('node-b');
  reports = new ReportStream(c, [a], { prefix: 'rep', rigs: 4, perBatch: 4 });
  let frozen = false;
  try {
    const witness = await goneRig('gone1');
    witnessId = witness.id;
    await waitFor(() => reports.acknowledged().length >= 16 || null, 60_000, 'reports before the stop', 50);
    await heartbeatsFresh(['node-a', 'node-b']);
    server.stop();
    const stopped = Date.now();
    await sleep(OUTAGE_MS);
    await waitFor(() => reports.answers.some((r) => r.at > stopped + STALE_MS && r.status === 503) || null, 60_000, 'a report answered 503 during the outage', 50);
    // node-b and the rigs come back a moment after node-a (a few seconds, well under their thresholds,
    // as a rig's next report comes at its own interval): node-a's first sweeps after the database came
    // back see node-b's last heartbeat and the rigs' last reports from before the outage.
    process.kill(b.pid()!, 'SIGSTOP');
    frozen = true;
    await reports.stop();
    server.start();
    const back = await waitFor(() => dbNow().catch(() => null), 60_000, 'the database back', 250);
    await sweptPast(witness.id, back, 0);
    process.kill(b.pid()!, 'SIGCONT');
    frozen = false;
    reports = new ReportStream(c, [a], { prefix: 'rep', rigs: 4, perBatch: 4 });
    await Promise.all(c.nodes.map(healthy));
    await heartbeatsFresh(['node-a', 'node-b']);
    const before = reports.acknowledged().length;
    await waitFor(() => reports.acknowledged().length >= before + 16 || null, 60_000, 'reports after the start', 50);
    // Twice the longest threshold after the database came back: sweeps have judged the silence.
    await sweptPast(witness.id, back, 2 * STALE_MS);
    const opened = (await incidentRows()).filter((r) => r.id !== witness.id);
    t.deepEqual(describe(opened), [], "no incident but the gone rig's: the silence was the database's");
    const sent = bodies().filter((x) => x.incident.id !== witness.id);
    t.deepEqual(sent.map((x) => `${x.event}: ${x.text}`), [], 'nothing sent but about the gone rig');
    t.ok(bodies().some((x) => x.incident.id === witness.id && x.event === 'opened'), "the receiver got the gone rig's message (it listens)");
  } catch (err) {
    fail(t, err);
  } finally {
    if (frozen) process.kill(b.pid()!, 'SIGCONT');
  }
});

test('a node killed (-9) while PostgreSQL is stopped: node_down once it stays silent after the database is back; nothing else', async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  const a = c.node('node-a');
  const b = c.node('node-b');
  try {
    await heartbeatsFresh(['node-a', 'node-b']);
    await waitFor(() => reports.acknowledged().length >= 16 || null, 60_000, 'reports before the stop', 50);
    const known = new Set((await incidentRows()).map((r) => r.id));
    server.stop();
    await sleep(1000);
    await b.stop('SIGKILL');
    const stopped = Date.now();
    await sleep(OUTAGE_MS);
    await waitFor(() => reports.answers.some((r) => r.at > stopped && r.status === 503) || null, 60_000, 'a report answered 503 during the outage', 50);
    server.start();
    const back = await waitFor(() => dbNow().catch(() => null), 60_000, 'the database back', 250);
    await healthy(a);
    const down = await waitFor(
      async () => (await incidentRows()).find((r) => !known.has(r.id) && r.kind === 'node_down' && r.subject === 'node-b'),
      120_000,
      'node_down for node-b',
      250,
    );
    downId = down.id;
    t.ok(new Date(down.opened_at).getTime() >= back, 'opened after the database came back');
    const sent = await waitFor(() => bodies().find((x) => x.incident.id === down.id && x.event === 'opened'), 60_000, 'the node_down message', 250);
    t.match(sent.text, /^node node-b \(.+\) is down: no heartbeat since .*Z$/, `sent: ${sent.text}`);
    const others = (await incidentRows()).filter((r) => !known.has(r.id) && r.id !== down.id);
    t.deepEqual(describe(others), [], 'no other incident (node-a and the rigs reporting through the outage)');
  } catch (err) {
    fail(t, err);
  }
});

test("node-b's node_down, open, stays open through another outage: not resolved by the database's return, not opened again", async (t) => {
  if (postgresOnly(t, WHY)) return;
  await setup();
  try {
    const known = new Set((await incidentRows()).map((r) => r.id));
    const sentBefore = hook.received.length;
    server.stop();
    const stopped = Date.now();
    await sleep(OUTAGE_MS / 2);
    await waitFor(() => reports.answers.some((r) => r.at > stopped && r.status === 503) || null, 60_000, 'a report answered 503 during the outage', 50);
    server.start();
    const back = await waitFor(() => dbNow().catch(() => null), 60_000, 'the database back', 250);
    await healthy(c.node('node-a'));
    await sweptPast(witnessId, back, 2 * STALE_MS);
    const [down] = await c.query<{ resolved_at: Date | null }>('SELECT resolved_at FROM incidents WHERE id = $1', [downId]);
    t.equal(down?.resolved_at, null, "node-b's node_down still open");
    const sent = bodies().slice(sentBefore).filter((x) => x.incident.id !== witnessId && x.event !== 'repeated');
    t.deepEqual(sent.map((x) => `${x.event}: ${x.text}`), [], 'nothing sent but repeats');
    t.deepEqual(describe((await incidentRows()).filter((r) => !known.has(r.id))), [], 'no new incident');
  } catch (err) {
    fail(t, err);
  } finally {
    await reports?.stop();
  }
});
