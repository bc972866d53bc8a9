// Several nodes on one PostgreSQL database. Two apps sweep the same silent rigs at the same time,
// again and again: every transition (opened, repeated, resolved) is made once, by one of them.
// Two `rigd serve` processes: one killed with -9, the other (holding or taking over the cluster
// duties) opens node_down for it; `rigd alerts --json` lists it.
import { QueryTypes } from 'sequelize';
import test from 'tape';
import type { IncidentEvent } from '../../../src/services/alerts/event.ts';
import { openApp, type App } from '../../../src/services/app.ts';
import { rigd } from '../../helpers/cli.ts';
import { serveProcess } from '../../helpers/serve-process.ts';
import { postgresOnly } from '../../helpers/dialect.ts';
import { testConfig } from '../../helpers/server.ts';
import { tmpDir } from '../../helpers/tmp.ts';
import { sleep, waitFor } from '../../helpers/jobs.ts';

test('two nodes sweeping at once: each transition once', async (t) => {
  if (postgresOnly(t, 'two nodes share one database only on PostgreSQL (SQLite has one rigd serve per data_dir)')) return;
  const config = testConfig({ alerts: { min_silence_s: 1, outage_share: 1, repeat_s: 1 } });
  // Each event with the incident's last_notified_at as its own transaction wrote it.
  const events: { node: string; e: IncidentEvent; notifiedAt: number }[] = [];
  const apps: App[] = [];
  for (const node of ['a', 'b']) {
    const app: App = await openApp(config, {
      onIncident: async (e, transaction) => {
        const [row] = await app.db.sequelize.query<{ at: string | Date }>('SELECT last_notified_at AS at FROM incidents WHERE id = ?', { replacements: [e.incident.id], transaction, type: QueryTypes.SELECT });
        events.push({ node, e: structuredClone(e), notifiedAt: new Date(row!.at).getTime() });
      },
    });
    apps.push(app);
  }
  const [a, b] = apps as [App, App];
  try {
    const { Rig, RigReport } = a.db.models;
    const now = Date.now();
    await a.db.writes.run(async (transaction) => {
      for (let r = 1; r <= 5; r++) {
        const id = `rig${r}`;
        await Rig.create({ id, serial: id, lan_ip: null, vpn_address: `10.144.41.${r + 1}`, version: '1.0', branch: 'main', latitude: null, longitude: null, last_seen_at: new Date(now - 10_000 * r), current_project: null }, { transaction });
        for (let i = 0; i < 6; i++) await RigReport.create({ rig_id: id, received_at: new Date(now - 10_000 * r - i * 1000), serial: id, lan_ip: null, peer_address: `10.144.41.${r + 1}`, version: '1.0', branch: 'main', latitude: null, longitude: null }, { transaction });
      }
    });
    for (let round = 0; round < 5; round++) await Promise.all([a.alerts.sweep(), b.alerts.sweep(), a.alerts.sweep(), b.alerts.sweep()]);
    const opened = events.filter((x) => x.e.event === 'opened');
    t.equal(opened.length, 5, `5 rigs silent: 5 opened events in all (by ${[...new Set(opened.map((x) => x.node))].join(' and ')})`);
    t.equal(new Set(opened.map((x) => x.e.incident.subject)).size, 5, 'one per rig');
    // The rounds above may take longer than repeat_s on a busy machine, so an incident may be
    // repeated more than once: what is checked is that each repeat was made by one node (two nodes
    // repeating it would write two last_notified_at within one sweep, far less than repeat_s apart).
    await sleep(1100);
    await Promise.all([a.alerts.sweep(), b.alerts.sweep()]);
    const repeated = events.filter((x) => x.e.event === 'repeated');
    const ids = [...new Set(opened.map((x) => x.e.incident.id))];
    t.deepEqual([...new Set(repeated.map((x) => x.e.incident.id))].sort(), [...ids].sort(), `after repeat_s: each incident repeated (${repeated.length} repeats)`);
    const gaps = ids.flatMap((id) => {
      const times = events.filter((x) => x.e.incident.id === id && x.e.event !== 'resolved').map((x) => x.notifiedAt);
      return times.slice(1).map((at, i) => at - times[i]!);
    });
    t.ok(gaps.every((ms) => ms >= 1000), `each repeat at least repeat_s after the last notification, none made twice by two nodes (gaps: ${gaps.join(', ')} ms)`);
    await a.db.writes.run((transaction) => Rig.update({ last_seen_at: new Date() }, { where: {}, transaction }));
    for (let round = 0; round < 3; round++) await Promise.all([a.alerts.sweep(), b.alerts.sweep()]);
    t.equal(events.filter((x) => x.e.event === 'resolved').length, 5, 'back: one resolution per incident');
    const rows = await a.db.reader.all<{ n: number }>('SELECT COUNT(*) AS n FROM incidents');
    t.equal(Number(rows[0]!.n), 5, 'five incidents in the table');
  } finally {
    await a.close();
    await b.close();
  }
});

test('node_down: two rigd serve, one killed with -9; the other opens node_down for it', async (t) => {
  if (postgresOnly(t, 'several nodes share one database only on PostgreSQL')) return;
  const dataDir = tmpDir();
  const env = { RIGD_DATA_DIR: dataDir, RIGD_CLUSTER_HEARTBEAT_S: '1', RIGD_ALERTS_CHECK_INTERVAL_S: '1' };
  const first = await serveProcess({ ...env, RIGD_CLUSTER_INSTANCE_ID: 'gw-a' });
  const second = await serveProcess({ ...env, RIGD_CLUSTER_INSTANCE_ID: 'gw-b' });
  try {
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
    const listed = await waitFor(
      async () => {
        const r = await rigd(['alerts', '--json'], { env });
        const doc = JSON.parse(r.stdout) as { incidents: { kind: string; subject: string; state: string; text: string }[] };
        return doc.incidents.find((i) => i.kind === 'node_down' && i.subject === 'gw-a' && i.state === 'open');
      },
      120_000,
      'node_down for gw-a',
      100,
    );
    t.match(listed.text, /^node gw-a \(.+\) is down: no heartbeat since .*Z$/, listed.text);
    const doc = JSON.parse((await rigd(['alerts', '--json'], { env })).stdout) as { incidents: { kind: string; subject: string }[] };
    t.notOk(doc.incidents.some((i) => i.kind === 'node_down' && i.subject === 'gw-b'), 'the live node is not down');
    t.equal(doc.incidents.filter((i) => i.kind === 'node_down').length, 1, 'one incident');
  } finally {
    t.equal(await second.stop(), 0, 'the other stops cleanly');
  }
});
