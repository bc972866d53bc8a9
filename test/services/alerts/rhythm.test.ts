// test: alone (rigs reporting every second; incidents within 4 intervals)
// Offline by each rig's own rhythm: two rigs report from VPN addresses, one every second, one every
// five; each is judged by its own learned interval (late after 1.5, offline after
// alerts.missed_reports = 3, never before alerts.min_silence_s), the page's API, `rigd rigs --json`
// and `rigd fleet --json` agree, each gets its rig_offline incident after 3 of its intervals and
// within the next check (alerts.check_interval_s, plus a busy machine's slack: far from the fixed
// rigs.online_after_s of a rig without a rhythm), once, and the incident resolves after the rig's next report.
import test from 'tape';
import { listRigs } from '../../../src/services/rigs/queries.ts';
import { rhythmOf } from '../../../src/services/rigs/view.ts';
import { rigStatus } from '../../../src/services/rigs/status.ts';
import { rigd } from '../../helpers/cli.ts';
import { startFleet, until, type Fleet } from './fleet.ts';

let f: Fleet;
const ALERTS = { min_silence_s: 1, check_interval_s: 1, outage_share: 1, flaps_per_hour: 3600 };

async function rig(id: string) {
  const rows = await listRigs(f.app.db.reader, f.config, new Date());
  return rows.find((r) => r.id === id);
}

async function rhythm(id: string) {
  const [row] = await f.app.db.reader.all<{ report_interval_s: number | null; report_intervals: number | null; last_seen_at: string | Date }>(
    'SELECT report_interval_s, report_intervals, last_seen_at FROM rigs WHERE id = ?',
    [id],
  );
  return row ? { ...rhythmOf(row), last: new Date(row.last_seen_at) } : null;
}

/** Latest moment of a rig_offline incident after the last report: 3 intervals, the next check, and 5 s of a busy machine. */
const within = (intervalS: number) => (3 * intervalS + ALERTS.check_interval_s + 5) * 1000;

const opened = (id: string) => f.events.filter((e) => e.event === 'opened' && e.incident.kind === 'rig_offline' && e.incident.subject === id);
const resolved = (id: string) => f.events.filter((e) => e.event === 'resolved' && e.incident.kind === 'rig_offline' && e.incident.subject === id);

test('setup: rig "fast" reports every 1 s, rig "slow" every 5 s, until each has a rhythm', async (t) => {
  f = await startFleet(36, [
    { id: 'fast', everyMs: 1000 },
    { id: 'slow', everyMs: 5000 },
  ], { alerts: ALERTS });
  const fast = await until('a rhythm for fast', async () => ((await rhythm('fast'))?.interval_s ? rhythm('fast') : null));
  const slow = await until('a rhythm for slow', async () => ((await rhythm('slow'))?.interval_s ? rhythm('slow') : null));
  t.ok(fast.interval_s! >= 0.7 && fast.interval_s! <= 1.5, `fast learned about 1 s (${fast.interval_s} s from ${fast.intervals} intervals)`);
  t.ok(slow.interval_s! >= 4 && slow.interval_s! <= 6.3, `slow learned about 5 s (${slow.interval_s} s from ${slow.intervals} intervals)`);
  t.ok((f.answers.get('fast') ?? []).every((s) => s === 200), 'every report answered 200');
  t.equal(f.events.length, 0, 'no incident while both report');
});

test('the one rule: late after 1.5 intervals, offline after missed_reports intervals and min_silence_s; fixed thresholds without a rhythm', async (t) => {
  const r = (await rhythm('slow'))!;
  const at = (s: number) => new Date(r.last.getTime() + s * 1000);
  const i = r.interval_s!;
  t.equal(rigStatus(r.last, at(1.4 * i), f.config, r), 'online', '1.4 intervals: online');
  t.equal(rigStatus(r.last, at(1.6 * i), f.config, r), 'stale', '1.6 intervals: stale (late)');
  t.equal(rigStatus(r.last, at(2.9 * i), f.config, r), 'stale', '2.9 intervals: still stale');
  t.equal(rigStatus(r.last, at(3.1 * i), f.config, r), 'offline', '3.1 intervals: offline');
  const patient = { ...f.config, alerts: { ...f.config.alerts, min_silence_s: 60 } };
  t.equal(rigStatus(r.last, at(10 * i), patient, r), 'stale', 'never offline before min_silence_s');
  t.equal(rigStatus(r.last, at(61), patient, r), 'offline', 'offline past min_silence_s');
  t.equal(rigStatus(r.last, at(10 * i), f.config, { interval_s: null, intervals: 0 }), 'online', 'no rhythm: rigs.online_after_s (300 s) applies');
  t.equal(rigStatus(r.last, at(10 * i), f.config, rhythmOf({ report_interval_s: i, report_intervals: 2 })), 'online', 'two intervals are not a rhythm yet');
  t.equal(rigStatus(r.last, at(301), f.config, { interval_s: null, intervals: 0 }), 'stale', 'no rhythm: stale past online_after_s');
});

test('both stop: each goes offline by its own rhythm, one incident each within 4 of its intervals; the listing, rigd rigs and rigd fleet agree', async (t) => {
  // Both stop right after one of slow's reports: slow then stays short of offline for its full 15 s,
  // room for the CLI below to start on a busy machine (stopped at a random point, it may have had 10).
  const slowAnswers = f.answers.get('slow')?.length ?? 0;
  await until("a report from slow", () => (f.answers.get('slow')?.length ?? 0) > slowAnswers);
  f.stop('fast', 'slow');
  const ev = await until('fast offline', () => opened('fast')[0]);
  const env = { RIGD_DATA_DIR: f.config.data_dir, RIGD_ALERTS_MIN_SILENCE_S: '1' };
  const [listed, cli, fleet] = await Promise.all([
    listRigs(f.app.db.reader, f.config, new Date()),
    rigd(['rigs', '--json'], { env }),
    rigd(['fleet', '--json'], { env }),
  ]);
  const cliRigs = JSON.parse(cli.stdout) as { data: { id: string; status: string }[] } | { id: string; status: string }[];
  const list = Array.isArray(cliRigs) ? cliRigs : cliRigs.data;
  t.equal(list.find((x) => x.id === 'fast')?.status, 'offline', 'rigd rigs --json: fast is offline');
  t.notEqual(list.find((x) => x.id === 'slow')?.status, 'offline', 'rigd rigs --json: slow, silent as long, is not offline yet');
  t.equal(listed.find((x) => x.id === 'fast')?.status, 'offline', 'the listing of the page and the API: fast is offline');
  t.ok(JSON.parse(fleet.stdout).data?.by_status?.offline >= 1 || JSON.parse(fleet.stdout).by_status?.offline >= 1, 'rigd fleet counts it offline');
  const fast = (await rhythm('fast'))!;
  const openedFast = new Date(ev.incident.opened_at).getTime() - fast.last.getTime();
  t.ok(openedFast <= within(fast.interval_s!), `fast: incident ${openedFast} ms after its last report (3 intervals and the next check: ${within(fast.interval_s!)} ms)`);
  t.ok(openedFast > 3 * fast.interval_s! * 1000, 'fast: not before 3 of its intervals');
  t.equal(ev.rig?.id, 'fast', 'the event names the rig');
  t.equal(ev.rig?.latitude, 52.52, 'where it was last');
  t.match(ev.text, /^rig fast offline: no report since \d{4}-\d\d-\d\dT[\d:.]+Z .*52\.52000, 13\.40500/, `one line: ${ev.text}`);
  const evSlow = await until('slow offline', () => opened('slow')[0]);
  const slow = (await rhythm('slow'))!;
  const openedSlow = new Date(evSlow.incident.opened_at).getTime() - slow.last.getTime();
  t.ok(openedSlow <= within(slow.interval_s!) && openedSlow > 3 * slow.interval_s! * 1000, `slow: incident ${openedSlow} ms after its last report (3 intervals of ${slow.interval_s} s, and the next check)`);
  t.ok(f.inTransaction.every(Boolean), 'every event came with its transaction');
});

test('back: resolved after the next report; one incident each, no fleet_outage', async (t) => {
  const before = f.answers.get('fast')?.length ?? 0;
  f.start('fast', 'slow');
  await until('a report from fast', () => (f.answers.get('fast')?.length ?? 0) > before);
  t.comment(`fast answers: ${JSON.stringify(f.answers.get('fast')?.slice(before))}`);
  const r1 = await until('fast resolved', () => resolved('fast')[0]);
  const r2 = await until('slow resolved', () => resolved('slow')[0]);
  t.ok(r1.rig && new Date(r1.rig.last_seen!).getTime() > new Date(r1.incident.opened_at).getTime(), 'fast resolved by a report after it opened');
  t.equal(r1.incident.id, opened('fast')[0]!.incident.id, 'the same incident resolves');
  t.ok(r2.incident.resolved_at, 'slow resolved');
  t.equal(opened('fast').length, 1, 'fast: opened once');
  t.equal(opened('slow').length, 1, 'slow: opened once');
  t.equal(f.events.filter((e) => e.incident.kind === 'fleet_outage').length, 0, 'no fleet_outage (alerts.outage_share 1)');
  t.equal((await rig('fast'))?.status, 'online', 'fast online again');
  await f.close();
});
