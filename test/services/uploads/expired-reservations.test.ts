// Expired reservations older than uploads.keep_expired_days are removed by the upload monitor's duty;
// younger ones, open ones and completed uploads stay.
import test from 'tape';
import { silentLogger } from '../../../src/log.ts';
import { openApp } from '../../../src/services/app.ts';
import { UploadMonitor } from '../../../src/services/uploads/monitor.ts';
import { testConfig } from '../../helpers/server.ts';

const DAY = 86_400_000;

test('the monitor removes expired reservations older than keep_expired_days, in batches, and nothing else', async (t) => {
  const config = testConfig({ uploads: { keep_expired_days: 7 } });
  const app = await openApp(config);
  try {
    const now = new Date();
    const { Upload } = app.db.models;
    const make = async (state: 'reserved' | 'expired' | 'uploaded', ageDays: number, key: string) => {
      const created = new Date(now.getTime() - ageDays * DAY);
      const row = await app.db.writes.run((transaction) =>
        Upload.create({ rig_id: 'rig1', peer_address: '10.144.23.2', key, expected_size: 10, project: null, state, url_expires_at: new Date(created.getTime() + 900_000) }, { transaction }),
      );
      await app.db.writes.run((transaction) => app.db.sequelize.query('UPDATE uploads SET created_at = ? WHERE id = ?', { replacements: [created, row.id], transaction }));
      return row.id;
    };
    const old: number[] = [];
    for (let i = 0; i < 1203; i++) old.push(await make('expired', 8 + (i % 5), `old/${i}`));
    const young = await make('expired', 6, 'young');
    const done = await make('uploaded', 30, 'done');
    const open = await make('reserved', 10, 'open');
    const monitor = new UploadMonitor(app.db, app.storage, app.uploads, silentLogger, 1000, config.uploads.keep_expired_days);
    const removed = await monitor.prune(now);
    t.equal(removed, 1203, 'every expired reservation older than 7 days removed (more than one batch)');
    const left = (await Upload.findAll({ attributes: ['id'], order: [['id', 'ASC']] })).map((u) => u.id);
    t.deepEqual(left, [young, done, open], 'a younger expired one, a completed upload and an open reservation stay');
    t.equal(await monitor.prune(now), 0, 'a second run removes nothing');
  } finally {
    await app.close();
  }
});
