import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { RigService } from '../../src/services/rigs/service.ts';
import { rigd } from '../helpers/cli.ts';
import { clockFrom } from '../helpers/clock-from.ts';
import { testConfig } from '../helpers/server.ts';

test('rigd rigs: table, --json, --status, as a child process on the server database', async (t) => {
  const config = testConfig();
  const env = { RIGD_DATA_DIR: config.data_dir };
  const empty = await rigd(['rigs'], { env });
  t.deepEqual([empty.code, empty.stdout], [0, 'no rig has reported yet\n'], 'fresh data_dir: a hint, exit 0');

  const db = await openDatabase(config.data_dir, { url: config.database.url });
  // Reports at fixed distances from one moment; the commands below start their clocks there.
  const seeded = Date.now();
  let at = seeded;
  const rigs = new RigService(db, config, { now: () => new Date(at) });
  const report = (id: string, agoS: number, extra: Record<string, string> = {}) => {
    at = seeded - agoS * 1000;
    return rigs.report(id, { rig_serial: `S-${id}`, local_ip: '192.168.5.5', software_version: '2.0', git_branch: 'main', gpsd_latitude: '10.5', ...extra }, '10.144.3.3');
  };
  await report('rig10', 10);
  await report('rig2', 20 * 60);
  await report('rig1', 3 * 3600, { local_ip: '' });
  await db.writes.run((transaction) => db.models.Rig.update({ current_project: 'survey-7' }, { where: { id: 'rig10' }, transaction }));
  await db.close();
  const seen = () => ({ ...env, ...clockFrom(seeded) });

  const json = await rigd(['rigs', '--json'], { env: seen() });
  t.equal(json.code, 0, `--json exits 0 ${json.stderr}`);
  t.equal(json.stderr, '', 'nothing on stderr');
  const list = JSON.parse(json.stdout);
  t.deepEqual(list.map((r: { id: string; status: string }) => [r.id, r.status]), [['rig1', 'offline'], ['rig2', 'stale'], ['rig10', 'online']], 'natural order with status');
  t.deepEqual([list[2].serial, list[2].latitude, list[2].current_project, list[2].vpn_address], ['S-rig10', 10.5, 'survey-7', '10.144.3.3'], 'fields');
  t.equal(list[0].online_since, null, 'offline rig: online_since null');
  t.equal(new Date(list[0].offline_since).getTime(), new Date(list[0].last_seen_at).getTime(), 'offline_since is its last report');
  t.equal(new Date(list[2].online_since).getTime(), new Date(list[2].last_seen_at).getTime(), 'online rig with one report: online since it');
  t.equal(list[2].offline_since, null, 'online rig: offline_since null');

  const stale = await rigd(['rigs', '--json', '--status', 'stale'], { env: seen() });
  t.deepEqual(JSON.parse(stale.stdout).map((r: { id: string }) => r.id), ['rig2'], '--status stale');

  const table = await rigd(['rigs'], { env: seen() });
  t.equal(table.code, 0, 'table exits 0');
  const lines = table.stdout.trimEnd().split('\n');
  t.match(lines[0], /^STATUS\s+ID\s+LAN IP\s+VPN ADDRESS\s+BRANCH \(VERSION\)\s+LAST REPORT\s+PROJECT$/, 'header');
  t.match(lines[1], /^offline\s+rig1\s+10\.144\.3\.3\s+main \(2\.0\)\s+about 3 hours ago$/, 'offline rig without LAN IP');
  t.match(lines[2], /^stale\s+rig2\s+192\.168\.5\.5\s+10\.144\.3\.3\s+main \(2\.0\)\s+20 minutes ago$/, 'stale rig');
  t.match(lines[3], /^online\s+rig10\s+192\.168\.5\.5\s+10\.144\.3\.3\s+main \(2\.0\)\s+less than a minute ago\s+survey-7$/, 'online rig with its project');
  t.equal(lines.length, 4, 'three rigs');

  const none = await rigd(['rigs', '--status', 'online', '--json'], { env: seen() });
  t.equal(JSON.parse(none.stdout).length, 1, 'one online');
  const bad = await rigd(['rigs', '--status', 'asleep'], { env });
  t.deepEqual([bad.code, bad.stderr], [2, 'rigd: --status must be one of online, stale, offline, got "asleep"\n'], 'bad status: usage error, exit 2');
});
