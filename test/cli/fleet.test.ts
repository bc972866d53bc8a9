// `rigd fleet` as a child process on a database written the way the server writes it: rigs on two
// branches mid-rollout, reports at chosen times through RigService.
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { RigService } from '../../src/services/rigs/service.ts';
import { rigd } from '../helpers/cli.ts';
import { clockFrom } from '../helpers/clock-from.ts';
import { testConfig } from '../helpers/server.ts';

const config = testConfig();
const env = { RIGD_DATA_DIR: config.data_dir };
const MIN = 60_000;

test('rigd fleet: counts by status, branch and version; rigs behind the newest version; --json parses', async (t) => {
  const empty = await rigd(['fleet'], { env });
  t.deepEqual([empty.code, empty.stdout], [0, 'no rig has reported yet\n'], 'no rig: a hint, exit 0');

  const db = await openDatabase(config.data_dir, { url: config.database.url });
  // Reports at fixed distances from one moment; the commands below start their clocks there.
  const seeded = Date.now();
  let at = seeded;
  const rigs = new RigService(db, config, { now: () => new Date(at) });
  const report = (id: string, agoMs: number, branch: string, version: string) => {
    at = seeded - agoMs;
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

  const json = await rigd(['fleet', '--json'], { env: { ...env, ...clockFrom(seeded) } });
  t.deepEqual([json.code, json.stderr], [0, ''], 'exit 0, nothing on stderr');
  const f = JSON.parse(json.stdout);
  t.equal(f.rigs, 5, 'five rigs');
  t.deepEqual(f.by_status, { online: 3, stale: 1, offline: 1 }, 'by status');
  t.deepEqual(f.by_branch.map((b: { branch: string; rigs: number }) => [b.branch, b.rigs]), [['beta', 1], ['main', 4]], 'by branch');
  const main = f.by_branch.find((b: { branch: string }) => b.branch === 'main');
  t.equal(main.newest_version, '1.1', 'main: newest is the highest version (1.1), not the one reported last (1.0)');
  t.deepEqual(main.versions.map((v: { version: string; rigs: number }) => [v.version, v.rigs]), [['1.1', 2], ['1.0', 2]], 'main: versions with counts, newest first');
  t.deepEqual(main.behind.map((r: { id: string; version: string; status: string }) => [r.id, r.version, r.status]), [['rig3', '1.0', 'online'], ['rig4', '1.0', 'offline']], 'main: rigs still on 1.0');
  const beta = f.by_branch.find((b: { branch: string }) => b.branch === 'beta');
  t.deepEqual([beta.newest_version, beta.behind], ['2.0-rc1', []], 'beta: one version, nobody behind');

  const text = await rigd(['fleet'], { env: { ...env, ...clockFrom(seeded) } });
  t.equal(text.code, 0, 'table exits 0');
  t.match(text.stdout, /^5 rigs: 3 online, 1 stale, 1 offline\n/, 'counts line');
  t.match(text.stdout, /main\s+1\.1\s+2\s+yes/, 'version table marks the newest');
  t.match(text.stdout, /rigs still on an old version \(2\)\n(.*\n)?.*rig3\s+1\.0\s+1\.1\s+online/, 'rigs behind listed');
});

test('rigd fleet: a rig going back to an older version does not make it newest; 1.10 is newer than 1.9', async (t) => {
  const cfg = testConfig();
  const db = await openDatabase(cfg.data_dir, { url: cfg.database.url });
  const seeded = Date.now();
  let at = seeded;
  const rigs = new RigService(db, cfg, { now: () => new Date(at) });
  const report = (id: string, agoMs: number, branch: string, version: string) => {
    at = seeded - agoMs;
    return rigs.report(id, { rig_serial: `S-${id}`, local_ip: '', software_version: version, git_branch: branch, gpsd_latitude: '', gpsd_longitude: '' }, '10.144.220.9');
  };
  // main: three rigs on 2.1 for an hour; rig8 goes back to 1.9, reported for the first time just now.
  for (const id of ['rig5', 'rig6', 'rig7']) await report(id, 60 * MIN, 'main', '2.1');
  await report('rig8', 1 * MIN, 'main', '1.9');
  // dev: 1.10 first seen long ago, 1.9 first seen since; 2.0-rc.2 newest of all, 2.0-rc.10 after it.
  await report('rig11', 120 * MIN, 'dev', '1.10');
  await report('rig12', 10 * MIN, 'dev', '1.9');
  await report('rig13', 5 * MIN, 'dev', '2.0-rc.2');
  await report('rig14', 30 * MIN, 'dev', '2.0-rc.10');
  await db.close();
  const f = JSON.parse((await rigd(['fleet', '--json'], { env: { RIGD_DATA_DIR: cfg.data_dir, ...clockFrom(seeded) } })).stdout);
  const main = f.by_branch.find((b: { branch: string }) => b.branch === 'main');
  t.equal(main.newest_version, '2.1', 'main: 2.1 stays newest after a rig went back to 1.9');
  t.deepEqual(main.behind.map((r: { id: string }) => r.id), ['rig8'], 'only the rig on 1.9 is behind, not the three on 2.1');
  const dev = f.by_branch.find((b: { branch: string }) => b.branch === 'dev');
  t.deepEqual(dev.versions.map((v: { version: string }) => v.version), ['2.0-rc.10', '2.0-rc.2', '1.10', '1.9'], 'dev: versions newest first, by version order');
  t.equal(dev.newest_version, '2.0-rc.10', 'dev: newest by version order');
  const text = await rigd(['fleet'], { env: { RIGD_DATA_DIR: cfg.data_dir, ...clockFrom(seeded) } });
  t.match(text.stdout, /main\s+2\.1\s+3\s+yes/, 'the table marks 2.1 newest');
  t.match(text.stdout, /rigs still on an old version \(4\)/, 'behind: rig8 on main, three on dev');
});
