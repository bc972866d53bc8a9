// test: alone (serve under a shifted clock; bounds on retention and report times)
// One clock, for real: rigd serve run under libfaketime (LD_PRELOAD), its clock shifted while the
// database keeps its own. SQLite: a node started 100 days ahead; its retention run removes nothing
// (the window is measured from the newest stored report, not from a clock gone wrong) and says so;
// a report it stores lies in the future once the clock is set right, so the next start warns, and
// the next report moves the rig to the present (never frozen in the future). PostgreSQL: a node
// 120 s ahead stores its report at the database's time, so a node with a right clock moves the rig
// on at once. Every acknowledged report is in the history exactly once.
import { existsSync } from 'node:fs';
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { serveProcess, type ServeProcess } from '../helpers/serve-process.ts';
import { onPostgres, withDb } from '../helpers/dialect.ts';
import { waitFor } from '../helpers/jobs.ts';
import { createHosts, type Hosts } from '../helpers/netns.ts';
import { tmpDir } from '../helpers/tmp.ts';

const RIG = { name: 'rig', addr: '10.144.154.2', gw: '10.144.154.1' };
const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const SHIFT = onPostgres ? '+120s' : '+100d';
const SHIFT_MS = onPostgres ? 120_000 : 100 * 86_400_000;
const RETENTION_LINE = /"msg":"rig history retention"[^\n]*"removed":(\d+)/;

async function rigState(dataDir: string): Promise<{ lastSeen: Date; history: Date[] }> {
  const db = await openDatabase(...withDb(dataDir));
  try {
    const rig = await db.models.Rig.findByPk('ck-rig');
    const rows = await db.models.RigReport.findAll({ where: { rig_id: 'ck-rig' }, order: [['id', 'ASC']] });
    return { lastSeen: new Date(rig!.last_seen_at), history: rows.map((r) => new Date(r.received_at)) };
  } finally {
    await db.close();
  }
}

test(`a node whose clock is ${SHIFT} ahead: times from one clock, retention removes nothing wrong, the rig never stays in the future`, async (t) => {
  t.ok(existsSync(LIBFAKETIME), `libfaketime is installed (${LIBFAKETIME})`);
  const dataDir = tmpDir();
  const env = { RIGD_DATA_DIR: dataDir, RIGD_LOG_LEVEL: 'info', RIGD_LOG_FORMAT: 'json', RIGD_CLUSTER_HEARTBEAT_S: '1' };
  const shifted = { ...env, LD_PRELOAD: LIBFAKETIME, FAKETIME: SHIFT, FAKETIME_DONT_FAKE_MONOTONIC: '1', FAKETIME_DONT_RESET: '1' };
  let hosts: Hosts | undefined;
  let server: ServeProcess | undefined;
  const start = async (e: Record<string, string>) => (server = await serveProcess(e, ['--port', '0', '--host', '0.0.0.0']));
  const report = async (lat: string) => {
    const port = new URL(server!.url).port;
    return hosts!.request('rig', {
      url: `http://${RIG.gw}:${port}/api/v1/rigs/ck-rig`,
      method: 'PUT',
      headers: { host: `${RIG.gw}:${port}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: `rig_serial=SN-CK&gpsd_latitude=${lat}&gpsd_longitude=8.54&local_ip=192.168.8.20&software_version=3.1.0&git_branch=main`,
    });
  };
  const retentionRun = (s: ServeProcess) =>
    waitFor(async () => RETENTION_LINE.exec(s.output()), 120_000, 'the first retention run (30 s after start)', 250).then((m) => Number(m[1]));
  try {
    hosts = await createHosts([RIG]);
    // Right clock: five reports.
    await start(env);
    for (const lat of ['47.1', '47.2', '47.3', '47.4', '47.5']) t.equal((await report(lat)).status, 200, `report ${lat} acknowledged`);
    t.equal(await server!.stop('SIGTERM'), 0, 'stopped');

    // The clock ahead.
    const shiftedServer = await start(shifted);
    t.equal(await retentionRun(shiftedServer), 0, `the retention run with the clock ${SHIFT} ahead removes nothing, and says so`);
    const before = Date.now();
    t.equal((await report('47.6')).status, 200, 'a report to the node whose clock is ahead, acknowledged');
    const after = Date.now();
    const ahead = await rigState(dataDir);
    const stamped = ahead.history[ahead.history.length - 1]!.getTime();
    if (onPostgres) {
      t.ok(stamped >= before - 5000 && stamped <= after + 5000, `PostgreSQL: received at the database's time, not the node's (${new Date(stamped).toISOString()})`);
    } else {
      t.ok(stamped >= before + SHIFT_MS - 60_000, `SQLite: received at the node's clock, ${SHIFT} ahead (${new Date(stamped).toISOString()})`);
    }
    t.equal(await server!.stop('SIGTERM'), 0, 'stopped');

    // The clock set right.
    const fixed = await start(env);
    const warned = /"msg":"the newest stored report lies ahead of this clock/.test(fixed.output());
    t.equal(warned, !onPostgres, onPostgres ? 'PostgreSQL: nothing stored lies ahead, no warning' : 'SQLite: the start warns that the newest stored report lies ahead of the clock');
    const sent = Date.now();
    t.equal((await report('47.7')).status, 200, 'a report with the clock right, acknowledged');
    const now = await rigState(dataDir);
    t.ok(now.lastSeen.getTime() >= sent - 5000 && now.lastSeen.getTime() <= Date.now() + 5000, `the rig's last report is this one, in the present: never frozen in the future (${now.lastSeen.toISOString()})`);
    t.equal(await retentionRun(fixed), 0, 'the next retention run removes nothing either');
    const final = await rigState(dataDir);
    t.equal(final.history.length, 7, 'all 7 acknowledged reports are in the history, once each');
  } catch (err) {
    t.fail(`${(err as Error).stack}\n${server?.output().slice(-3000) ?? ''}`);
  } finally {
    if (server && server.child.exitCode === null) await server.stop('SIGKILL');
    await hosts?.destroy();
  }
});
