// test: alone (rigs reporting every second; silence timing across a restart)
// rigd away is not the fleet gone dark: 5 rigs report every second until each has a rhythm, then
// rigd stops cleanly for several of their offline thresholds while the rigs keep trying. Started
// again, it opens no incident for the rigs that report as soon as it is back; the one rig that
// stopped while rigd was away is still told, once its silence since rigd came back is long enough;
// the rig whose incident was open before the stop is not told it is back (it never reported).
import test from 'tape';
import { startFleet, until, type Fleet } from './fleet.ts';

let f: Fleet;
const IDS = Array.from({ length: 6 }, (_, i) => `rig${i + 1}`);
// Offline after 3 silent intervals of 1 s (min_silence_s 1): rigd away for 10 s is over 3 times that.
const ALERTS = { min_silence_s: 1, check_interval_s: 1, outage_share: 0.5 };
const AWAY_MS = 10_000;

const opened = () => f.events.filter((e) => e.event === 'opened');

test('setup: 6 rigs report every second until each has a rhythm', async (t) => {
  f = await startFleet(52, IDS.map((id) => ({ id, everyMs: 1000 })), { alerts: ALERTS });
  await until('a rhythm for all 6', async () => {
    const rows = await f.app.db.reader.all<{ n: number }>('SELECT COUNT(*) AS n FROM rigs WHERE report_intervals >= 4');
    return Number(rows[0]?.n ?? 0) === 6;
  });
  t.equal(opened().length, 0, 'no incident while all report');
});

test('rig6 stops before rigd does: its rig_offline opens', async (t) => {
  f.stop('rig6');
  const rig6 = await until('rig_offline for rig6', () => opened().find((e) => e.incident.kind === 'rig_offline' && e.incident.subject === 'rig6'));
  t.ok(rig6, 'opened before the restart');
});

test('rigd away for 10 s, rig5 stopping meanwhile: back, no outage and no rig_offline for the rigs that report again', async (t) => {
  f.stop('rig5');
  const before = new Map(IDS.map((id) => [id, f.answers.get(id)?.length ?? 0]));
  await f.restart(AWAY_MS);
  const back = IDS.slice(0, 4);
  const resolvedBefore = f.events.filter((e) => e.event === 'resolved').length;
  const openedBefore = opened().length;
  await until('a report answered from rig1..rig4 after the restart', () => back.every((id) => (f.answers.get(id) ?? []).slice(before.get(id)).includes(200)));
  for (let i = 0; i < 3; i++) await f.app.alerts.sweep();
  const wrong = opened().slice(openedBefore).filter((e) => e.incident.kind === 'fleet_outage' || (e.incident.kind === 'rig_offline' && e.incident.subject !== 'rig5'));
  t.deepEqual(
    wrong.map((e) => `${e.incident.kind} ${e.incident.subject ?? (e.rigs ?? []).join(',')}`),
    [],
    'no incident for rigs that were silent only because rigd was away',
  );
  t.deepEqual(
    f.events.filter((e) => e.event === 'resolved').slice(resolvedBefore).map((e) => e.incident.subject),
    [],
    "rig6's incident, open from before the stop, is not resolved by rigd's return (rig6 never reported)",
  );
});

test('rig5, still silent after rigd came back: its own rig_offline, once', async (t) => {
  const rig5 = await until('rig_offline for rig5', () => opened().find((e) => e.incident.kind === 'rig_offline' && e.incident.subject === 'rig5'));
  t.match(rig5.text, /^rig rig5 offline: no report since .*Z/, rig5.text);
  for (let i = 0; i < 2; i++) await f.app.alerts.sweep();
  t.deepEqual(opened().map((e) => e.incident.subject).sort(), ['rig5', 'rig6'], "one incident each for rig5 and rig6, nothing else");
  t.equal(f.events.filter((e) => e.event === 'resolved').length, 0, 'none resolved: neither rig reported');
});

test('teardown', async () => {
  await f.close();
});
