// A capture queued for ingestion is ingested from the version that was queued, whatever its rig PUTs
// to the key afterwards: the embedded store keeps that version's content until its job ends. Rigs
// reserve and PUT from a real VPN address (network namespace); the ingester starts only after the
// overwrite, so both versions are queued when it runs.
import { readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { silentLogger } from '../../src/log.ts';
import { createServer } from '../../src/server/server.ts';
import { openApp } from '../../src/services/app.ts';
import { makeCapture } from '../helpers/capture-files.ts';
import { waitFor } from '../helpers/jobs.ts';
import { createHosts } from '../helpers/netns.ts';
import { testConfig } from '../helpers/server.ts';
import { closedPort } from '../helpers/storage.ts';
import { tmpDir } from '../helpers/tmp.ts';

const GW = '10.144.24.1';
const A = '10.144.24.2';
const KEY = 'rig5/day1.sqlite';

test('a queued version is ingested after its rig overwrote the key; the new version is a capture of its own', async (t) => {
  const net = await createHosts([{ name: 'rig', addr: A, gw: GW }]);
  const port = await closedPort();
  const app = await openApp(testConfig({ server: { port }, storage: { public_url: `http://${GW}:${port}` } }));
  const server = await createServer(app, { host: '0.0.0.0', port, log: silentLogger });
  await server.start();
  const request = (p: string, init: { method?: string; body?: string } = {}) =>
    net.request('rig', {
      url: `http://${GW}:${port}${p}`,
      method: init.method ?? 'GET',
      headers: { host: 'vpn.rigs.internal', ...(init.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(init.body ? { body: init.body } : {}),
    });
  const upload = async (file: string, size: number) => {
    const res = await request(`/api/v1/rigs/upload?key=${encodeURIComponent(KEY)}&size=${size}`);
    if (res.status !== 200) throw new Error(`reservation: ${res.status} ${res.body}`);
    return (await net.curl('rig', ['-X', 'PUT', '-T', file, JSON.parse(res.body).url as string])).status;
  };
  try {
    const dir = tmpDir();
    const table = (rows: number) => [{ name: 'readings', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'value', type: 'REAL' }], rows }];
    const v1 = await makeCapture(path.join(dir, 'v1.sqlite'), { tables: table(3) });
    const v2 = await makeCapture(path.join(dir, 'v2.sqlite'), { tables: table(7) });
    t.equal((await request('/api/v1/rigs/rig5', { method: 'PUT', body: 'rig_serial=SN-5' })).status, 200, 'rig5 reports');

    t.equal(await upload(v1.path, v1.sizeBytes), 200, 'rig5 uploads version 1');
    const first = await waitFor(async () => (await app.captures.list()).captures.find((c) => c.etag === v1.sha256), 60_000, 'capture of version 1');
    t.equal(first.state, 'queued', 'version 1 is queued (the ingester is not running yet)');
    t.equal(await upload(v2.path, v2.sizeBytes), 200, 'rig5 overwrites its key with version 2');
    t.equal((await app.storage.stat(KEY))?.etag, v2.sha256, 'the key now holds version 2');

    await app.start(); // the ingester
    const done = async (id: number) => {
      const c = await app.captures.get(id);
      return c.state === 'ingested' || c.state === 'failed' ? c : null;
    };
    const one = await waitFor(() => done(first.id), 60_000, 'capture 1 ingested');
    t.equal(one.state, 'ingested', `version 1 ingested (not failed object_changed) ${one.state === 'failed' ? JSON.stringify(one) : ''}`);
    t.deepEqual([one.sha256, one.tables?.map((x) => [x.name, x.rows])], [v1.sha256, [['readings', 3]]], 'from the bytes of version 1: 3 rows');
    const second = (await app.captures.list()).captures.find((c) => c.etag === v2.sha256);
    t.ok(second, 'version 2 is a capture of its own');
    const two = await waitFor(() => done(second!.id), 60_000, 'capture 2 ingested');
    t.deepEqual([two.state, two.sha256, two.tables?.map((x) => x.rows)], ['ingested', v2.sha256, [7]], 'version 2 ingested with its 7 rows');
    const held = path.join(app.config.data_dir, 'objects', '.held', app.config.storage.bucket);
    await waitFor(() => !existsSync(held) || readdirSync(held).length === 0, 60_000, 'kept versions let go');
    t.pass('the kept copy of version 1 is let go once its job is done');
    t.equal((await app.storage.stat(KEY))?.etag, v2.sha256, 'the key still holds version 2');
  } finally {
    await server.stop({ timeout: 2000 });
    await app.close();
    await net.destroy();
  }
});
