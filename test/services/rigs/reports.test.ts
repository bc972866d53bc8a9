import test from 'tape';
import { openDatabase, type Database } from '../../../src/db/index.ts';
import { compareRigIds, rigStatus } from '../../../src/services/rigs/status.ts';
import { RigService } from '../../../src/services/rigs/service.ts';
import { rejects } from '../../helpers/assert.ts';
import { testConfig } from '../../helpers/server.ts';

const T0 = new Date('2026-05-01T12:00:00.000Z');

async function setup(): Promise<{ db: Database; rigs: RigService; clock: { now: Date }; sql: string[] }> {
  const config = testConfig();
  const db = await openDatabase(config.data_dir, { url: config.database.url });
  const clock = { now: T0 };
  const sql: string[] = [];
  (db.sequelize as unknown as { options: { logging: (s: string) => void } }).options.logging = (s) => void sql.push(s);
  return { db, rigs: new RigService(db, config, { now: () => clock.now }), clock, sql };
}

const body = (serial: string, extra: Record<string, string> = {}) => ({ rig_serial: serial, gpsd_latitude: '1.5', gpsd_longitude: '2.5', local_ip: '192.168.0.9', software_version: '1.0', git_branch: 'main', ...extra });

test('status from the age of the last report: online <= 300 s < stale <= 3600 s < offline', (t) => {
  const th = { rigs: { online_after_s: 300, offline_after_s: 3600 }, alerts: { missed_reports: 3, min_silence_s: 300 } };
  const ago = (s: number) => new Date(T0.getTime() - s * 1000);
  t.equal(rigStatus(ago(0), T0, th), 'online');
  t.equal(rigStatus(ago(300), T0, th), 'online', '300 s: online');
  t.equal(rigStatus(ago(301), T0, th), 'stale', '301 s: stale');
  t.equal(rigStatus(ago(3600), T0, th), 'stale', '3600 s: stale');
  t.equal(rigStatus(ago(3601), T0, th), 'offline', '3601 s: offline');
  t.deepEqual(['rig10', 'rig2', 'rig1', 'alpha', 'rig-3', 'Rig20'].sort(compareRigIds), ['alpha', 'rig-3', 'rig1', 'rig2', 'rig10', 'Rig20'], 'natural order');
  t.end();
});

test('reports register and update rigs; the list is in natural order with status computed when read, from the rigs table only', async (t) => {
  const { db, rigs, clock, sql } = await setup();
  try {
    for (const id of ['rig10', 'rig2', 'RIG1']) await rigs.report(id, body(`S-${id}`), '10.144.0.5');
    clock.now = new Date(T0.getTime() + 1000);
    await rigs.report('rig2', body('S-rig2b', { gpsd_latitude: 'nan', local_ip: '' }), '10.144.0.5');
    clock.now = new Date(T0.getTime() + 1800_000);
    sql.length = 0;
    const list = await rigs.list();
    t.deepEqual(list.map((r) => r.id), ['rig1', 'rig2', 'rig10'], 'natural order, ids lower-cased');
    t.ok(sql.length > 0 && sql.every((s) => !/rig_reports/.test(s)), 'listing never reads the history table');
    const rig2 = list[1];
    t.deepEqual(
      [rig2.serial, rig2.latitude, rig2.longitude, rig2.lan_ip, rig2.vpn_address, rig2.vpn_name, rig2.last_seen_at.toISOString()],
      ['S-rig2b', null, 2.5, null, '10.144.0.5', 'rig2.rigs.internal', new Date(T0.getTime() + 1000).toISOString()],
      'the latest report wins; nan and empty stored as null',
    );
    t.equal(rig2.status, 'stale', '30 min after: stale');
    clock.now = new Date(T0.getTime() + 2 * 3600_000);
    t.deepEqual((await rigs.list({ status: 'offline' })).map((r) => r.id), ['rig1', 'rig2', 'rig10'], 'two hours later all offline');
    t.deepEqual(await rigs.list({ status: 'online' }), [], 'none online');
    const created = (await rigs.get('rig2')).created_at.toISOString();
    t.equal(created, T0.toISOString(), 'created_at kept from the first report');
    t.equal(await db.models.RigReport.count(), 4, 'one history row per report');
  } finally {
    await db.close();
  }
});

test('group commit: concurrent reports share transactions; each resolves after its commit', async (t) => {
  const { db, rigs } = await setup();
  try {
    // Every batch the write path commits, with its size (SQLite runs a batch as one script, whose
    // COMMIT Sequelize's log never sees; PostgreSQL through a transaction).
    const batches: number[] = [];
    db.writes.observe({ batch: (size) => void batches.push(size) });
    const done: number[] = [];
    await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        rigs.report(`rig${i % 30}`, body(`S${i}`), `10.144.1.${i % 30}`).then(async () => {
          // By the time the promise resolves, the row is visible to other connections.
          done.push(await db.models.RigReport.count({ where: { serial: `S${i}` } }));
        }),
      ),
    );
    t.equal(await db.models.RigReport.count(), 60, '60 history rows');
    t.equal(await db.models.Rig.count(), 30, '30 rigs (each reported twice, one in each of the same batches)');
    t.equal(batches.reduce((a, b) => a + b, 0), 60, 'every report in a committed batch');
    t.ok(batches.length >= 1 && batches.length < 10, `60 reports in ${batches.length} transactions (${batches.join(', ')})`);
    t.deepEqual(done, Array(60).fill(1), 'every report was committed when its promise resolved');
    t.equal((await rigs.get('rig7')).serial, 'S37', 'the later report of the same rig in one batch wins');
  } finally {
    await db.close();
  }
});

test('a refused report writes nothing', async (t) => {
  const { db, rigs } = await setup();
  try {
    await rejects(t, rigs.report('rig1', { gpsd_latitude: '1' }, '10.144.0.1'), /rig_serial is required/, 'refused');
    await rejects(t, rigs.report('-x', body('s'), '10.144.0.1'), /DNS label/, 'bad id refused');
    t.equal(await db.models.Rig.count(), 0, 'no rig');
    t.equal(await db.models.RigReport.count(), 0, 'no history');
  } finally {
    await db.close();
  }
});

test('history: newest first, since/until window, limit with a cap, unknown rig', async (t) => {
  const { db, rigs, clock } = await setup();
  try {
    for (let i = 0; i < 10; i++) {
      clock.now = new Date(T0.getTime() + i * 60_000);
      await rigs.report('rig1', body(`S${i}`), '10.144.0.1');
    }
    await rigs.report('rig2', body('other'), '10.144.0.2');
    const all = await rigs.history('RIG1');
    t.deepEqual(all.map((r) => r.serial), ['S9', 'S8', 'S7', 'S6', 'S5', 'S4', 'S3', 'S2', 'S1', 'S0'], 'newest first, only this rig');
    const at = (i: number) => new Date(T0.getTime() + i * 60_000);
    t.deepEqual((await rigs.history('rig1', { since: at(3), until: at(6) })).map((r) => r.serial), ['S5', 'S4', 'S3'], 'since inclusive, until exclusive');
    t.deepEqual((await rigs.history('rig1', { limit: 2 })).map((r) => r.serial), ['S9', 'S8'], 'limit');
    t.deepEqual(Object.keys(all[0]).sort(), ['branch', 'lan_ip', 'latitude', 'longitude', 'peer_address', 'received_at', 'serial', 'version'], 'fields');
    await rejects(t, rigs.history('rig1', { limit: 10_001 }), /limit must be between 1 and 10000/, 'cap');
    await rejects(t, rigs.history('rig1', { limit: 0 }), /limit must be between/, 'zero');
    await rejects(t, rigs.history('nope'), /rig not found/, 'unknown rig');
  } finally {
    await db.close();
  }
});

test('a late batch never moves a rig back: a report older than the rig\'s last one adds history, not state', async (t) => {
  const { db, rigs, clock } = await setup();
  try {
    clock.now = new Date(T0.getTime() + 60_000);
    await rigs.report('rig1', body('S-new', { software_version: '2.0' }), '10.144.0.5');
    // A batch that commits after a later one (batches commit at once on PostgreSQL) carries older reports.
    clock.now = T0;
    await rigs.report('rig1', body('S-old', { software_version: '1.0' }), '10.144.0.5');
    const rig = await rigs.get('rig1');
    t.equal(rig.serial, 'S-new', 'the rig keeps its latest report');
    t.equal(rig.version, '2.0');
    t.equal(new Date(rig.last_seen_at).getTime(), T0.getTime() + 60_000, 'last seen never moves backwards');
    const history = await rigs.history('rig1');
    t.deepEqual(history.map((r) => r.serial), ['S-new', 'S-old'], 'both reports are in the history');
  } finally {
    await db.close();
  }
});

test('reports of many rigs from many clients at once all land (batches at once on PostgreSQL, in id order: no deadlock)', async (t) => {
  const { db, rigs } = await setup();
  try {
    const ids = Array.from({ length: 40 }, (_, i) => `rig${i}`);
    const sends: Promise<void>[] = [];
    for (let round = 0; round < 10; round++) {
      // Each round in another order, so concurrent batches hold the same rigs in different orders.
      const order = round % 2 === 0 ? ids : [...ids].reverse();
      for (const id of order) sends.push(rigs.report(id, body(`S-${id}`), '10.144.0.5'));
      await new Promise((r) => setImmediate(r));
    }
    const results = await Promise.allSettled(sends);
    t.equal(results.filter((r) => r.status === 'rejected').length, 0, 'no report failed');
    t.equal(await db.models.RigReport.count(), 400, 'every acknowledged report is in the history');
    t.equal(await db.models.Rig.count(), 40);
  } finally {
    await db.close();
  }
});
