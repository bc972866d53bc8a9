// reimportCaptures (rigd captures reimport): --rig and --since select ingested captures; each selected
// capture gets a new job whose import replaces its rows (never doubles them); no selection at all is
// refused.
import test from 'tape';
import { reimportCaptures } from '../../../src/services/captures/reimport.ts';
import { InvalidInput } from '../../../src/errors.ts';
import { countRows } from '../../helpers/capture-store.ts';
import { settled } from '../../helpers/captures.ts';
import { seedCapture } from '../../helpers/seed-capture.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { tmpDir } from '../../helpers/tmp.ts';

const files = tmpDir();
let s: TestServer;
const ids: number[] = [];
const table = (n: number) => [{ name: 'readings', columns: [{ name: 'v', type: 'INTEGER' }], rows: Array.from({ length: n }, (_, i) => [i]) }];

test('setup: three ingested captures of two rigs', async (t) => {
  s = await startServer();
  for (const [key, n] of [['rig-a/1.sqlite', 5], ['rig-a/2.sqlite', 7], ['rig-b/1.sqlite', 9]] as const) ids.push(await seedCapture(s.app, files, key, table(n)));
  // The rig an upload came from (uploads by rigs are not part of this test).
  await s.app.db.models.Capture.update({ rig_id: 'rig-a' }, { where: { id: [ids[0]!, ids[1]!] } });
  await s.app.db.models.Capture.update({ rig_id: 'rig-b' }, { where: { id: ids[2]! } });
  t.equal(ids.length, 3);
});

test('--rig: only that rig (any case); rows replaced, not doubled', async (t) => {
  const queued = await reimportCaptures(s.app.db, s.app.captures, { rig: 'RIG-A' });
  t.deepEqual(queued.map((q) => q.id), [ids[0], ids[1]], "rig-a's two captures, oldest first");
  for (const q of queued) t.equal((await settled(s.app, q.id)).state, 'ingested', `capture ${q.id} ingested again`);
  t.deepEqual([await countRows(s.config.data_dir, 'readings', ids[0]!), await countRows(s.config.data_dir, 'readings', ids[1]!)], [5, 7], 'each with its own rows once');
});

test('--since: captures last imported since then', async (t) => {
  const none = await reimportCaptures(s.app.db, s.app.captures, { since: new Date(Date.now() + 60_000) });
  t.deepEqual(none, [], 'nothing imported after a time to come');
  const recent = await reimportCaptures(s.app.db, s.app.captures, { since: new Date(Date.now() - 120_000) });
  t.deepEqual(recent.map((q) => q.id), ids, 'all three imported within the last two minutes');
  for (const id of ids) t.equal((await settled(s.app, id)).state, 'ingested', `capture ${id} ingested again`);
  t.equal(await countRows(s.config.data_dir, 'readings', ids[2]!), 9, 'rows as before');
});

test('no selection: refused', async (t) => {
  try {
    await reimportCaptures(s.app.db, s.app.captures, {});
    t.fail('should throw');
  } catch (err) {
    t.ok(err instanceof InvalidInput, 'InvalidInput');
    t.match((err as Error).message, /--all, --rig ID or --since T/, 'says what to give');
  }
});

test('teardown', async () => {
  await s.close();
});
