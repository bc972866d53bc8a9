// test: alone (two-node cluster)
// Two `rigd serve` nodes on one PostgreSQL database share the jobs table: each notification is
// sent by one node, once (the claim and its lease). Incidents are queued by this process through
// Notifier on the shared database, as the alerts service of either node would. PostgreSQL only.
import test from 'tape';
import { openDatabase } from '../../../src/db/index.ts';
import { Notifier } from '../../../src/services/notify/notifier.ts';
import { startCluster, type Cluster } from '../../helpers/cluster.ts';
import { postgresOnly } from '../../helpers/dialect.ts';
import { sleep, waitFor } from '../../helpers/jobs.ts';
import { testConfig } from '../../helpers/server.ts';
import { tmpDir } from '../../helpers/tmp.ts';
import { notifyJobs, offlineEvent, payloadOf } from './events.ts';
import { signatureValid, startHttpSink } from './sinks.ts';

const SECRET = 'whsec-nodes-a87ff679a2f3e71d9181a67b7542122c';
const INCIDENTS = 30;

test('two rigd serve nodes: every notification sent once, by one of them', async (t) => {
  if (postgresOnly(t, 'several nodes share one PostgreSQL database; on SQLite rigd is one node')) return;
  const http = await startHttpSink();
  // A receiver that takes its time: both nodes have deliveries running at once.
  http.delayMs = 150;
  const notify = { webhooks: [{ url: http.url('/hooks/rigd'), secret: SECRET, events: ['*'] }], first_retry_s: 0.2 };
  let c: Cluster | undefined;
  try {
    c = await startCluster({ rigNet: { addr: '10.144.42.2', gw: '10.144.42.1', cidr: '10.144.42.0/24' }, config: { notify } });
    const config = testConfig({ database: { url: c.databaseUrl }, notify } as Parameters<typeof testConfig>[0]);
    const db = await openDatabase(tmpDir('rigd-notify-nodes-'), { url: c.databaseUrl });
    try {
      const notifier = new Notifier(config.notify);
      for (let id = 1; id <= INCIDENTS; id++) await db.writes.run((tx) => notifier.enqueue(offlineEvent(id), tx));
      const rows = await waitFor(
        async () => {
          const all = await notifyJobs(db);
          return all.length === INCIDENTS && all.every((r) => r.state === 'done') ? all : null;
        },
        120_000,
        `${INCIDENTS} notifications to be delivered`,
        100,
      );
      await sleep(1500); // room for a second send, should one be coming (none may)
      const deliveries = rows.map((r) => payloadOf(r).delivery).sort();
      t.deepEqual(http.received.map((r) => String(r.headers['x-rigd-delivery'])).sort(), deliveries, `the receiver got each of the ${INCIDENTS} notifications exactly once`);
      t.ok(http.received.every((r) => signatureValid(r, SECRET)), 'all signed');
      const sentBy = c.nodes.map((n) => (n.output().match(/"msg":"notification sent"/g) ?? []).length);
      t.comment(`sent by node-a: ${sentBy[0]}, node-b: ${sentBy[1]}`);
      t.equal(sentBy[0] + sentBy[1], INCIDENTS, 'the nodes\' logs count one send per notification between them');
      t.ok(rows.every((r) => r.attempts === 1), 'each job claimed and run once');
    } finally {
      await db.close();
    }
  } catch (err) {
    if (c) t.comment(c.outputs());
    throw err;
  } finally {
    await c?.close();
    await http.close();
  }
});
