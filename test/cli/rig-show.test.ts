// `rigd rigs show ID` and `rigd rigs history ID` as child processes on a database written the
// way the server writes it (RigService reports at chosen times, uploads and captures as rows).
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { RigService } from '../../src/services/rigs/service.ts';
import { fixture } from '../helpers/fixture.ts';
import { rigd } from '../helpers/cli.ts';
import { clockFrom } from '../helpers/clock-from.ts';
import { testConfig } from '../helpers/server.ts';

const config = testConfig();
const env = { RIGD_DATA_DIR: config.data_dir };
/** The moment the reports are dated from; each command's clock starts there (clockFrom). */
let seeded = 0;
const clocked = () => ({ ...env, ...clockFrom(seeded) });
/** ISO 8601 UTC with milliseconds, ending in Z (the JSON's times, whatever the local zone). */
const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const HOUR = 3600_000;

/** Rig7 reports over three days from two positions; rig8 has its own upload and capture. */
const setup = fixture(async () => {
  const db = await openDatabase(config.data_dir, { url: config.database.url });
  seeded = Date.now();
  let at = seeded;
  const rigs = new RigService(db, config, { now: () => new Date(at) });
  const report = (id: string, agoMs: number, lat: string, version = '2.0') => {
    at = seeded - agoMs;
    return rigs.report(id, { rig_serial: `S-${id}`, local_ip: '192.168.170.7', software_version: version, git_branch: 'main', gpsd_latitude: lat, gpsd_longitude: lat ? '13.25' : '' }, '10.144.170.7');
  };
  await report('rig7', 72 * HOUR, '1.5', '1.9');
  await report('rig7', 30 * HOUR, '1.5', '1.9');
  await report('rig7', 5 * HOUR, '2.5');
  await report('rig7', 2 * HOUR, '2.5');
  await report('rig7', 60_000, '');
  await report('rig8', 60_000, '3.5');
  await db.writes.run(async (transaction) => {
    const { Upload, Capture, Job } = db.models;
    const expires = new Date(Date.now() + HOUR);
    await Upload.create({ rig_id: 'rig7', peer_address: '10.144.170.7', key: 'rig7/a.sqlite', expected_size: 2048, project: 'survey-1', url_expires_at: expires }, { transaction });
    await Upload.create({ rig_id: 'rig7', peer_address: '10.144.170.7', key: 'rig7/b\u001b[31m.log', expected_size: 10, project: null, url_expires_at: expires }, { transaction });
    await Upload.create({ rig_id: 'rig8', peer_address: '10.144.170.8', key: 'rig8/x.sqlite', expected_size: 1, project: null, url_expires_at: expires }, { transaction });
    await Capture.create({ bucket: 'captures', key: 'rig7/a.sqlite', etag: 'e1', size: 2048, rig_id: 'rig7', project: 'survey-1', job_id: (await Job.create({ kind: 'capture', payload: '{}', max_attempts: 5, run_after: new Date(), state: 'failed', attempts: 1, error_code: 'not_sqlite', last_error: 'not a SQLite database' }, { transaction })).id }, { transaction });
    await Capture.create({ bucket: 'captures', key: 'rig8/x.sqlite', etag: 'e2', size: 1, rig_id: 'rig8', project: null }, { transaction });
  });
  await db.close();
});

test('rigs show --json: status, addresses, last report in UTC, position runs, only its own uploads and captures', async (t) => {
  await setup();
  const res = await rigd(['rigs', 'show', 'RIG7', '--json'], { env: { ...clocked(), TZ: 'Asia/Kolkata' } });
  t.deepEqual([res.code, res.stderr], [0, ''], 'exit 0, nothing on stderr');
  const d = JSON.parse(res.stdout);
  t.deepEqual([d.id, d.status, d.serial, d.branch, d.version, d.vpn_address, d.vpn_name, d.lan_ip], ['rig7', 'online', 'S-rig7', 'main', '2.0', '10.144.170.7', 'rig7.rigs.internal', '192.168.170.7'], 'fields of the last report');
  t.match(d.last_report.at, ISO_Z, `last report ISO 8601 UTC with Z, whatever the local zone (TZ=Asia/Kolkata): ${d.last_report.at}`);
  t.equal(new Date(d.last_report.at).getTime(), seeded - 60_000, 'and the right moment');
  t.equal(d.last_report.ago, '1 minute ago', 'relative time');
  t.deepEqual(Object.keys(d.last_report).sort(), ['ago', 'at'], 'JSON has no local time with an offset (the text view has it)');
  t.deepEqual(
    d.positions.map((p: { latitude: number; reports: number }) => [p.latitude, p.reports]),
    [[2.5, 2], [1.5, 2]],
    'positions from the history, newest first, a parked stretch as one run (the report without a fix left out)',
  );
  t.deepEqual([d.latitude, d.longitude], [null, null], 'the last report had no fix: no current position');
  t.deepEqual([d.last_fix?.latitude, d.last_fix?.longitude, d.last_fix?.age], [2.5, 13.25, '2 h'], 'last_fix: the last known position, 2 h old');
  t.match(d.last_fix?.at ?? '', ISO_Z, 'with its time');
  t.deepEqual([d.uploads.total, d.uploads.recent.map((u: { key: string }) => u.key)], [2, ['rig7/b\u001b[31m.log', 'rig7/a.sqlite']], "its uploads, newest first (not rig8's)");
  t.deepEqual([d.captures.total, d.captures.recent.map((c: { key: string; state: string }) => `${c.key} ${c.state}`)], [1, ['rig7/a.sqlite failed']], 'its captures');
  t.match(d.captures.recent[0].created_at, ISO_Z, 'capture times in UTC too');
  const a = d.availability;
  t.deepEqual(
    a.offline_periods.map((p: { duration_s: number; end: string | null }) => [Math.round(p.duration_s / 3600), p.end === null]),
    [[2, false], [3, false], [25, false], [42, false]],
    'offline periods from the gaps over an hour, newest first (~2 h, 3 h, 25 h, 42 h), none open: it reported a minute ago',
  );
  t.match(a.offline_periods[1].start, ISO_Z, 'period times in UTC');
  // 72 h before the seeding, plus however long the command took to start (not 7 days).
  t.ok(a.online_7d.clipped && a.online_7d.window_s >= 72 * 3600 && a.online_7d.window_s < 73 * 3600, `7 days clipped to the first report, 72 h ago (${a.online_7d.window_s} s)`);
  t.ok(a.online_24h.percent > 0 && a.online_24h.percent < 1, `24 h: almost all offline (${a.online_24h.percent}%)`);
});

test('rigs show: the text view', async (t) => {
  await setup();
  const res = await rigd(['rigs', 'show', 'rig7'], { env: clocked() });
  t.equal(res.code, 0, 'exit 0');
  const out = res.stdout;
  t.match(out, /^rig rig7: online\n/, 'first line: id and status');
  t.match(out, /\n {2}VPN address +10\.144\.170\.7 \(rig7\.rigs\.internal\)\n/, 'VPN address and name');
  t.match(out, /\n {2}bound to +10\.144\.170\.7\n/, 'the address the id is bound to');
  t.match(out, /\n {2}local_ip +192\.168\.170\.7\n/, 'local_ip');
  t.match(out, /\n {2}last report +1 minute ago \(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \+00:00 \(UTC\)\)\n/, 'last report: words, then the absolute time with zone');
  t.match(out, /\n {2}2\.50000,13\.25000 .* 2\n {2}1\.50000,13\.25000 .* 2\n/, 'position runs');
  t.match(
    out,
    /\n {2}position +2\.50000,13\.25000 \(last fix 2 h ago, \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \+00:00 \(UTC\); no fix in the last report\)\n/,
    'the last report had no fix: the last known position, with its time',
  );
  t.match((await rigd(['rigs', 'show', 'rig8'], { env: clocked() })).stdout, /\n {2}position +3\.50000,13\.25000\n/, 'a rig whose last report had a fix: its position');
  t.match(out, /uploads \(2 of 2, newest first\)/, 'uploads heading');
  t.match(out, /\noffline periods in the last 7 days \(newest first\)\n {2}FROM +UNTIL +DURATION\n.*\n.* 3 h\n/, 'offline periods table');
  t.match(out, /\n {2}online last 7 d +\d+(\.\d+)?% \(of 3 d since the first retained report\)\n/, '7-day share says it is clipped');
  t.ok(out.includes('rig7/b\\x1b[31m.log'), 'a control character in a key is shown escaped');
  t.notOk(out.includes('\u001b'), 'no escape character reaches the terminal');
  t.match(out, /captures \(1 of 1, newest first\)\n.*\n {2}\d+ +failed +rig7\/a\.sqlite +2048 +survey-1 .* not_sqlite\n/, 'capture with its error');
});

test('rigs show / history: an unknown or impossible id is one line, exit 1', async (t) => {
  await setup();
  for (const args of [['rigs', 'show', 'nope'], ['rigs', 'show', 'nope', '--json'], ['rigs', 'history', 'nope'], ['rigs', 'show', '../etc']]) {
    const res = await rigd(args, { env: clocked() });
    const id = args[2];
    t.deepEqual([res.code, res.stdout, res.stderr], [1, '', `rigd: rig ${id} not found\n`], `${args.join(' ')}: "rig ${id} not found", exit 1`);
  }
});

test('rigs history: --since windows, newest first, --json in UTC, --csv, bad --since is a usage error', async (t) => {
  await setup();
  const day = await rigd(['rigs', 'history', 'rig7', '--json'], { env: clocked() });
  t.deepEqual([day.code, day.stderr], [0, ''], 'default window exits 0');
  const rows = JSON.parse(day.stdout);
  t.deepEqual(rows.map((r: { gpsd_latitude: number | null }) => r.gpsd_latitude), [null, 2.5, 2.5], 'default 24h: three reports, newest first');
  t.ok(rows.every((r: { received_at: string }) => ISO_Z.test(r.received_at)), 'received_at ISO 8601 UTC with Z');
  t.deepEqual(Object.keys(rows[0]), ['received_at', 'rig_serial', 'gpsd_latitude', 'gpsd_longitude', 'local_ip', 'software_version', 'git_branch', 'peer_address'], 'the interface\'s field names, in the order of the CSV columns');

  const counts: [string, number][] = [['30s', 0], ['30m', 1], ['3h', 2], ['7d', 5], ['1d8h', 4], ['2w', 5]];
  for (const [since, n] of counts) {
    const res = await rigd(['rigs', 'history', 'rig7', '--since', since, '--json'], { env: clocked() });
    t.equal(JSON.parse(res.stdout).length, n, `--since ${since}: ${n} reports`);
  }

  const csv = await rigd(['rigs', 'history', 'rig7', '--since', '7d', '--csv'], { env: clocked() });
  const lines = csv.stdout.split('\r\n');
  t.equal(lines[0], 'received_at,rig_serial,gpsd_latitude,gpsd_longitude,local_ip,software_version,git_branch,peer_address', 'CSV header');
  t.deepEqual(Object.keys(rows[0]), lines[0]!.split(','), '--json fields and --csv columns: one name each');
  t.match(lines[5]!, /^\d{4}-\d{2}-\d{2}T[\d:.]+Z,S-rig7,1\.5,13\.25,192\.168\.170\.7,1\.9,main,10\.144\.170\.7$/, 'oldest row last');
  t.equal(lines.length, 7, 'five rows and the final line end');

  const table = await rigd(['rigs', 'history', 'rig7', '--since', '3h'], { env: clocked() });
  const tl = table.stdout.trimEnd().split('\n');
  t.match(tl[0]!, /^TIME +POSITION +SERIAL +LOCAL IP +BRANCH \(VERSION\) +VPN ADDRESS$/, 'table header');
  t.match(tl[1]!, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z +- +S-rig7 +192\.168\.170\.7 +main \(2\.0\) +10\.144\.170\.7$/, 'report without a fix');
  const none = await rigd(['rigs', 'history', 'rig7', '--since', '30s'], { env: clocked() });
  t.deepEqual([none.code, none.stdout], [0, 'no report from rig7 in the last 30s\n'], 'an empty window says so');

  for (const bad of ['24', 'yesterday', '0h', '-1h', '5y', '99999d', '1h ago']) {
    const res = await rigd(['rigs', 'history', 'rig7', '--since', bad], { env: clocked() });
    t.equal(res.code, 2, `--since "${bad}": exit 2`);
    t.equal(res.stderr.split('\n').length, 2, `--since "${bad}": one line`);
    t.match(res.stderr, /^rigd: --since must be a duration such as 30m, 24h or 7d/, 'saying what is expected');
    t.equal(res.stdout, '', 'nothing on stdout');
  }
  const both = await rigd(['rigs', 'history', 'rig7', '--csv', '--json'], { env: clocked() });
  t.deepEqual([both.code, both.stderr], [2, 'rigd: --csv and --json exclude each other\n'], '--csv with --json: usage error');
});

test('the plain rig list is unchanged by the subcommands', async (t) => {
  await setup();
  const res = await rigd(['rigs', '--json'], { env: clocked() });
  t.deepEqual(JSON.parse(res.stdout).map((r: { id: string }) => r.id), ['rig7', 'rig8'], 'rigd rigs --json still lists');
  const stray = await rigd(['rigs', 'rig7'], { env: clocked() });
  t.equal(stray.code, 2, 'an id without show: usage error');
});
