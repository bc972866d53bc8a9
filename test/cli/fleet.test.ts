// `rigd fleet` as a child process on a database written the way the server writes it: rigs on two
// branches mid-rollout, reports at chosen times through RigService.
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { RigService } from '../../src/services/rigs/service.ts';
import { rigd } from '../helpers/cli.ts';
import { testConfig } from '../helpers/server.ts';

const config = testConfig();
const env = { RIGD_DATA_DIR: config.data_dir };
const MIN = 60_000;

test('rigd fleet: counts by status, branch and version; rigs behind the newest version; --json parses', async (t) => {
  const empty = await rigd(['fleet'], { env });
  t.deepEqual([empty.code, empty.stdout], [0, 'no rig has reported yet\n'], 'no rig: a hint, exit 0');

  const db = await openDatabase(config.data_dir, { url: config.database.url });
  let at = Date.now();
  const rigs = new RigService(db, config, { now: () => new Date(at) });
  const report = (id: string, agoMs: number, branch: string, version: string) => {
    at = Date.now() - agoMs;
    return rigs.report(id, { rig_serial: `S-${id}`, local_ip: '', software_version: version, git_branch: branch, gpsd_latitude: '', gpsd_longitude: '' }, '10.144.220.9');
  };
  // main: 1.0 everywhere an hour ago; rig1 and rig2 moved to 1.1 since; rig3 still reports 1.0 (most
  // recently of all: its report does not make 1.0 newer); rig4 went silent on 1.0 3 h ago (offline).
  await report('rig4', 180 * MIN, 'main', '1.0');
  for (const id of ['rig1', 'rig2', 'rig3']) await report(id, 60 * MIN, 'main', '1.0');
  await report('rig1', 4 * MIN, 'main', '1.1');
  await report('rig2', 3 * MIN, 'main', '1.1');
  await report('rig3', 1 * MIN, 'main', '1.0');
  // beta: one rig on 2.0-rc1, stale.
  await report('rig10', 30 * MIN, 'beta', '2.0-rc1');
  await db.close();

  const json = await rigd(['fleet', '--json'], { env });
  t.deepEqual([json.code, json.stderr], [0, ''], 'exit 0, nothing on stderr');
  const f = JSON.parse(json.stdout);
  t.equal(f.rigs, 5, 'five rigs');
  t.deepEqual(f.by_status, { online: 3, stale: 1, offline: 1 }, 'by status');
  t.deepEqual(f.by_branch.map((b: { branch: string; rigs: number }) => [b.branch, b.rigs]), [['beta', 1], ['main', 4]], 'by branch');
  const main = f.by_branch.find((b: { branch: string }) => b.branch === 'main');
  t.equal(main.newest_version, '1.1', 'main: newest is the version that appeared last (1.1), not the one reported last (1.0)');
  t.deepEqual(main.versions.map((v: { version: string; rigs: number }) => [v.version, v.rigs]), [['1.1', 2], ['1.0', 2]], 'main: versions with counts (most rigs first, then higher version)');
  t.deepEqual(main.behind.map((r: { id: string; version: string; status: string }) => [r.id, r.version, r.status]), [['rig3', '1.0', 'online'], ['rig4', '1.0', 'offline']], 'main: rigs still on 1.0');
  const beta = f.by_branch.find((b: { branch: string }) => b.branch === 'beta');
  t.deepEqual([beta.newest_version, beta.behind], ['2.0-rc1', []], 'beta: one version, nobody behind');

  const text = await rigd(['fleet'], { env });
  t.equal(text.code, 0, 'table exits 0');
  t.match(text.stdout, /^5 rigs: 3 online, 1 stale, 1 offline\n/, 'counts line');
  t.match(text.stdout, /main\s+1\.1\s+2\s+yes/, 'version table marks the newest');
  t.match(text.stdout, /rigs still on an old version \(2\)\n(.*\n)?.*rig3\s+1\.0\s+1\.1\s+online/, 'rigs behind listed');
});
