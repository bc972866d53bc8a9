// Offline periods and online shares derived from the report history: reports written at chosen
// times through RigService into a real SQLite file, read back with the same SQL the CLI runs.
import test from 'tape';
import { openDatabase } from '../../../src/db/index.ts';
import { fleetStretches, rigAvailability, storedTimeMs } from '../../../src/services/rigs/availability.ts';
import { RigService } from '../../../src/services/rigs/service.ts';
import { testConfig } from '../../helpers/server.ts';

const NOW = new Date('2026-05-08T12:00:00.000Z');
const H = 3600_000;
const ago = (ms: number) => new Date(NOW.getTime() - ms);
const ms = (iso: string | null) => (iso === null ? null : new Date(iso).getTime());

// offline_after_s = 3600 (the default): a gap of more than an hour between reports is offline.
const config = testConfig({ rigs: { offline_after_s: 3600, online_after_s: 300 } });

test('availability from known report times', async (t) => {
  const db = await openDatabase(config.data_dir, { url: config.database.url });
  let at = NOW;
  const rigs = new RigService(db, config, { now: () => at });
  const report = (id: string, when: Date) => {
    at = when;
    return rigs.report(id, { rig_serial: `S-${id}`, local_ip: '', software_version: '1.0', git_branch: 'main', gpsd_latitude: '', gpsd_longitude: '' }, '10.144.220.1');
  };
  // steady: every 30 min for 10 days, except a 5 h hole that ended 2 h ago and a 3 h hole 3 days ago.
  for (let t0 = 10 * 24 * H; t0 >= 0; t0 -= H / 2) {
    const inHole = (t0 < 7 * H && t0 > 2 * H) || (t0 < 75 * H && t0 > 72 * H);
    if (!inHole) await report('steady', ago(t0));
  }
  // young: first report 6 h ago, every 30 min until now (never offline).
  for (let t0 = 6 * H; t0 >= 0; t0 -= H / 2) await report('young', ago(t0));
  // gone: every 30 min from 30 h ago until 10 h ago, silent since.
  for (let t0 = 30 * H; t0 >= 10 * H; t0 -= H / 2) await report('gone', ago(t0));
  // once: a single report 3 h ago.
  await report('once', ago(3 * H));
  // old: reported 9 days ago only (nothing in the 7-day window).
  await report('old', ago(9 * 24 * H));
  // fresh: a single report a minute ago.
  await report('fresh', ago(60_000));

  const r = db.reader;
  const steady = await rigAvailability(r, config, 'steady', NOW);
  t.deepEqual(
    steady.offline_periods.map((p) => [ms(p.start), ms(p.end), p.duration_s]),
    [
      [ago(7 * H).getTime(), ago(2 * H).getTime(), 5 * 3600],
      [ago(75 * H).getTime(), ago(72 * H).getTime(), 3 * 3600],
    ],
    'steady: two holes, newest first, from the last report before to the first after',
  );
  t.equal(steady.online_24h.percent, Math.round(((24 - 5) / 24) * 10_000) / 100, 'steady: 19 of 24 h online');
  t.equal(steady.online_24h.clipped, false, 'steady: older than the window, not clipped');
  t.equal(steady.online_7d.percent, Math.round(((168 - 8) / 168) * 10_000) / 100, 'steady: 160 of 168 h online');
  t.equal(steady.online_7d.window_s, 7 * 86400, 'steady: the whole week is the denominator');

  const young = await rigAvailability(r, config, 'young', NOW);
  t.deepEqual(young.offline_periods, [], 'young: no offline period');
  t.deepEqual([young.online_24h.percent, young.online_24h.window_s, young.online_24h.clipped], [100, 6 * 3600, true], 'young: 100% of the 6 h since its first report (clipped)');
  t.deepEqual([young.online_7d.percent, young.online_7d.window_s, young.online_7d.clipped], [100, 6 * 3600, true], 'young: same over 7 days');

  const gone = await rigAvailability(r, config, 'gone', NOW);
  t.deepEqual(gone.offline_periods.map((p) => [ms(p.start), p.end, p.duration_s]), [[ago(10 * H).getTime(), null, 10 * 3600]], 'gone: offline since its last report, until now');
  t.deepEqual([gone.online_24h.percent, gone.online_24h.window_s, gone.online_24h.clipped], [Math.round((14 / 24) * 10_000) / 100, 24 * 3600, false], 'gone: 14 of the last 24 h');
  t.deepEqual([gone.online_7d.percent, gone.online_7d.window_s, gone.online_7d.clipped], [Math.round((20 / 30) * 10_000) / 100, 30 * 3600, true], 'gone: 20 of the 30 h since its first report (7 days clipped)');

  const once = await rigAvailability(r, config, 'once', NOW);
  t.deepEqual(once.offline_periods.map((p) => [ms(p.start), p.end, p.duration_s]), [[ago(3 * H).getTime(), null, 3 * 3600]], 'once: a single report 3 h ago is offline since');
  t.deepEqual([once.online_24h.percent, once.online_24h.window_s, once.online_24h.clipped], [0, 3 * 3600, true], 'once: 0% of 3 h');

  const fresh = await rigAvailability(r, config, 'fresh', NOW);
  t.deepEqual([fresh.offline_periods, fresh.online_24h.percent, fresh.online_24h.window_s], [[], 100, 60], 'fresh: a single report a minute ago is 100% of a minute');

  const old = await rigAvailability(r, config, 'old', NOW);
  t.deepEqual(
    old.offline_periods.map((p) => [ms(p.start), p.end, p.duration_s]),
    [[ago(7 * 24 * H).getTime(), null, 7 * 86400]],
    'old: no report in the window: offline the whole week (period clipped to the window start)',
  );
  t.deepEqual([old.online_7d.percent, old.online_24h.percent, old.online_7d.clipped], [0, 0, false], 'old: 0% online');
  t.equal(ms(old.first_report), ago(9 * 24 * H).getTime(), 'old: first retained report');

  const none = await rigAvailability(r, config, 'nosuch', NOW);
  t.deepEqual([none.offline_periods, none.online_24h.percent, none.first_report], [[], null, null], 'no report at all: unknown, not 0%');

  const stretches = await fleetStretches(r, config, NOW);
  const s = (id: string) => {
    const v = stretches.get(id);
    return v ? [ms(v.online_since), ms(v.offline_since)] : undefined;
  };
  t.deepEqual(s('steady'), [ago(2 * H).getTime(), null], 'steady: online since the first report after the last hole');
  t.deepEqual(s('young'), [ago(6 * H).getTime(), null], 'young: online since its first report');
  t.deepEqual(s('gone'), [null, ago(10 * H).getTime()], 'gone: offline since its last report');
  t.deepEqual(s('once'), [null, ago(3 * H).getTime()], 'once: offline since its only report');
  t.deepEqual(s('fresh'), [ago(60_000).getTime(), null], 'fresh: online since its only report');
  t.equal(stretches.get('old'), undefined, 'old: nothing in the lookback window (the listing falls back to last_seen_at)');
  await db.close();
});

test('stored times are read as Sequelize writes them, and any other form through Date', (t) => {
  const text = 'x,2026-11-23 07:37:30.123 +00:00,2026-11-23T08:00:00.5Z,1999-01-02 03:04:05.006 +00:00';
  const at = (i: number) => {
    const parts = text.split(',');
    const start = parts.slice(0, i).join(',').length + 1;
    return storedTimeMs(text, start, start + parts[i].length);
  };
  t.equal(at(1), Date.parse('2026-11-23T07:37:30.123Z'), 'the stored form');
  t.equal(at(2), Date.parse('2026-11-23T08:00:00.500Z'), 'ISO 8601 with Z: through Date');
  t.equal(at(3), Date.parse('1999-01-02T03:04:05.006Z'), 'single digits and milliseconds');
  t.equal(storedTimeMs('2026-11-23 07:37:30.123 +01:00', 0, 30), Date.parse('2026-11-23T06:37:30.123Z'), 'another offset: through Date');
  t.end();
});
