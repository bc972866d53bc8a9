import test from 'tape';
import { openDatabase } from '../../../src/db/index.ts';
import { RigRetention } from '../../../src/services/rigs/retention.ts';
import { RigService } from '../../../src/services/rigs/service.ts';
import { sqliteOnly } from '../../helpers/dialect.ts';
import { testConfig } from '../../helpers/server.ts';

const DAY = 86_400_000;

test('retention deletes only rows older than history_retention_days, in bounded batches, with reports committing between them', async (t) => {
  const config = testConfig({ rigs: { history_retention_days: 90 } });
  const db = await openDatabase(config.data_dir, { url: config.database.url });
  const now = new Date('2026-06-01T00:00:00.000Z');
  const rigs = new RigService(db, config, { now: () => now });
  try {
    await rigs.report('rig1', { rig_serial: 'seed' }, '10.144.0.1');
    const { RigReport } = db.models;
    // 3,000 rows older than the cutoff, 500 just inside it, written straight into the history.
    const cutoff = now.getTime() - 90 * DAY;
    const row = (at: number, serial: string) => ({ rig_id: 'rig1', received_at: new Date(at), serial, peer_address: '10.144.0.1', version: '', branch: '', lan_ip: null, latitude: null, longitude: null });
    await db.writes.run(async (transaction) => {
      await RigReport.bulkCreate(Array.from({ length: 3000 }, (_, i) => row(cutoff - 1 - i * 1000, 'old')), { transaction });
      await RigReport.bulkCreate(Array.from({ length: 500 }, (_, i) => row(cutoff + i * 1000, 'kept')), { transaction });
    });
    const retention = new RigRetention(db, 90, { batchSize: 200, pauseMs: 1 });
    t.equal(retention.cutoff(now).getTime(), cutoff, 'cutoff = now - 90 days');

    // Ordering, not timing: prune's first batch takes the writer; a report submitted right after
    // it is next in line, so it commits after exactly one batch of 200, long before the sweep ends.
    let pruning = true;
    const prune = retention.prune(now).finally(() => (pruning = false));
    await rigs.report('live', { rig_serial: 'first-live' }, '10.144.0.2');
    t.ok(pruning, 'a report submitted during the sweep committed before the sweep finished');
    // SQLite: one writer, so the report's batch is next in line behind the sweep's first batch.
    // PostgreSQL: report batches commit beside the write path (WritePath.runBeside), so they never
    // queue behind a sweep batch at all, and how many batches it has deleted meanwhile is timing.
    if (!sqliteOnly(t, 'report batches commit beside the sweep on PostgreSQL, not after one of its batches')) {
      t.equal(await RigReport.count({ where: { serial: 'old' } }), 2800, 'exactly one batch of 200 was deleted before it');
    }
    let sent = 1;
    while (pruning) {
      await rigs.report(`live${sent % 10}`, { rig_serial: `live-${sent}` }, '10.144.0.2');
      sent++;
    }
    const deleted = await prune;
    t.equal(deleted, 3000, 'all 3,000 old rows deleted');
    t.equal(await RigReport.count({ where: { serial: 'old' } }), 0, 'no old row left');
    t.equal(await RigReport.count({ where: { serial: 'kept' } }), 500, 'rows inside the window kept (the boundary row included)');
    t.equal(await RigReport.count({ where: { serial: 'seed' } }), 1, 'the fresh report kept');
    // SQLite: a report waits for at most one batch, so the 15 batches let at least 7 awaited reports
    // through. PostgreSQL: reports do not wait for the batches at all; how many of them fit in the
    // sweep's time is the machine's speed (a busy one fitted 4).
    if (!sqliteOnly(t, 'report batches commit beside the sweep on PostgreSQL: how many fit in its time is timing')) {
      t.ok(sent >= 7, `reports kept committing between the batches (${sent})`);
    }
    t.equal(await RigReport.count({ where: { peer_address: '10.144.0.2' } }), sent, 'every one of them stored');
    t.equal(await retention.prune(now), 0, 'a second run finds nothing');
  } finally {
    await db.close();
  }
});

test('the schedule runs prune and stops cleanly', async (t) => {
  const config = testConfig({ rigs: { history_retention_days: 1 } });
  const db = await openDatabase(config.data_dir, { url: config.database.url });
  const rigs = new RigService(db, config, { now: () => new Date(Date.now() - 2 * DAY) });
  const current = new RigService(db, config);
  try {
    await rigs.report('rig1', { rig_serial: 'old' }, '10.144.0.1');
    // The window is measured from the newest stored report (or now, if earlier): a fresh one.
    await current.report('rig2', { rig_serial: 'fresh' }, '10.144.0.2');
    const errors: unknown[] = [];
    const runs: { removed: number }[] = [];
    const retention = new RigRetention(db, 1, { firstRunMs: 10, intervalMs: 50, onError: (e) => errors.push(e), onPruned: (run) => runs.push(run) });
    retention.start();
    const deadline = Date.now() + 60_000;
    while ((await db.models.RigReport.count()) > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    t.equal(await db.models.RigReport.count({ where: { serial: 'old' } }), 0, 'the scheduled run deleted the old row');
    await retention.stop();
    t.equal(runs[0]?.removed, 1, 'and told what it removed');
    await rigs.report('rig1', { rig_serial: 'old2' }, '10.144.0.1');
    await new Promise((r) => setTimeout(r, 150));
    t.equal(await db.models.RigReport.count(), 2, 'stopped: no further runs');
    t.deepEqual(errors, [], 'no errors');
  } finally {
    await db.close();
  }
});
