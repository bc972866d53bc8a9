// The upload monitor with the minio driver and no webhook (polling only): a reservation whose URL
// runs out between two of its backed-off checks gets a last look in storage before it is called
// expired. An object the rig PUT in time completes it (and hands its capture over); no object
// expires it; storage not answering keeps it reserved until storage can say. The monitor's ticks are
// driven with explicit times (its clock argument), so nothing depends on this machine's speed.
import test from 'tape';
import { silentLogger } from '../../../src/log.ts';
import { openApp } from '../../../src/services/app.ts';
import { UploadMonitor } from '../../../src/services/uploads/monitor.ts';
import { http } from '../../helpers/http.ts';
import { startS3Peer } from '../../helpers/s3-peer.ts';
import { testConfig } from '../../helpers/server.ts';
import { closedPort } from '../../helpers/storage.ts';

test('minio, polling only: a reservation whose object came between checks is completed at expiry, not expired', async (t) => {
  const peer = await startS3Peer();
  const config = testConfig({
    storage: { driver: 'minio', minio: { endpoint: peer.endpoint, port: peer.port, access_key: peer.accessKey, secret_key: peer.secretKey, timeout_ms: 3000 } },
  });
  const app = await openApp(config);
  const monitor = new UploadMonitor(app.db, app.storage, app.uploads, silentLogger);
  try {
    await app.storage.ensureBucket();
    const put = await app.uploads.reserve({ key: 'rig9/late.sqlite', size: '11' }, '10.144.56.9');
    const none = await app.uploads.reserve({ key: 'rig9/never.sqlite', size: '11' }, '10.144.56.9');
    const { Upload } = app.db.models;
    const row = await Upload.findByPk(put.id);
    // Its checks backed off: the next one is due a minute after the URL runs out.
    const expiry = row!.url_expires_at.getTime();
    await app.db.writes.run((transaction) => Upload.update({ checks: 10, next_check_at: new Date(expiry + 60_000) }, { where: { id: [put.id, none.id] }, transaction }));
    t.equal((await http(put.url, { method: 'PUT', body: 'hello rigs!' })).status, 200, 'the rig PUT in time');
    await monitor.tick(new Date(expiry + 1000));
    t.equal((await Upload.findByPk(put.id))?.state, 'uploaded', 'the reservation whose object is there: uploaded');
    t.equal((await Upload.findByPk(none.id))?.state, 'expired', 'the one without an object: expired');
    t.equal(await app.db.models.Capture.count({ where: { key: 'rig9/late.sqlite' } }), 1, 'its capture handed over');
  } finally {
    await monitor.stop();
    await app.close();
    await peer.close();
  }
});

test('minio, storage not answering: an overdue reservation stays reserved until storage can say', async (t) => {
  const config = testConfig({
    storage: { driver: 'minio', minio: { endpoint: '127.0.0.1', port: await closedPort(), access_key: 'k', secret_key: 'secret', timeout_ms: 3000 } },
  });
  const app = await openApp(config);
  const monitor = new UploadMonitor(app.db, app.storage, app.uploads, silentLogger);
  try {
    const { Upload } = app.db.models;
    const expires = new Date(Date.now() - 60_000);
    const row = await app.db.writes.run((transaction) =>
      Upload.create({ rig_id: null, peer_address: '10.144.56.9', key: 'rig9/during-outage.sqlite', expected_size: 11, project: null, url_expires_at: expires, next_check_at: new Date(expires.getTime() + 60_000) }, { transaction }),
    );
    await monitor.tick(new Date());
    t.equal((await Upload.findByPk(row.id))?.state, 'reserved', 'not expired while storage cannot be asked');
  } finally {
    await monitor.stop();
    await app.close();
  }
});
