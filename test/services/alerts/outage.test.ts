// test: alone (rigs reporting every second; outage timing)
// One outage, one incident: 10 rigs report every second from VPN addresses; 8 stop at once and the
// sweep opens one fleet_outage naming them (and no rig_offline for any of them); 6 come back and
// the outage resolves listing the 2 still missing, which then get their own rig_offline. A rig
// that flaps (offline and back more often than alerts.flaps_per_hour) stays one incident.
import test from 'tape';
import { startFleet, until, sleep, type Fleet } from './fleet.ts';

let f: Fleet;
const IDS = Array.from({ length: 10 }, (_, i) => `rig${i + 1}`);
const STOPPING = IDS.slice(0, 8);
// flaps_per_hour 360: a rig back for less than 10 s that goes offline again is flapping.
const ALERTS = { min_silence_s: 1, check_interval_s: 1, outage_share: 0.5, flaps_per_hour: 360 };

const of = (kind: string, event: string, subject?: string) => f.events.filter((e) => e.incident.kind === kind && e.event === event && (subject === undefined || e.incident.subject === subject));

async function rhythms(): Promise<number> {
  const rows = await f.app.db.reader.all<{ n: number }>('SELECT COUNT(*) AS n FROM rigs WHERE report_intervals >= 4');
  return Number(rows[0]?.n ?? 0);
}

test('setup: 10 rigs report every second until each has a rhythm', async (t) => {
  f = await startFleet(37, IDS.map((id) => ({ id, everyMs: 1000 })), { alerts: ALERTS });
  await until('a rhythm for all 10', async () => (await rhythms()) === 10);
  t.equal(f.events.length, 0, 'no incident while all report');
});

test('8 of 10 stop at once: one fleet_outage naming them, no rig_offline', async (t) => {
  f.stop(...STOPPING);
  const opened = await until('the fleet outage', () => of('fleet_outage', 'opened')[0]);
  t.deepEqual([...(opened.rigs ?? [])].sort(), [...STOPPING].sort(), 'it names the 8 silent rigs');
  t.match(opened.text, /^fleet outage: 8 of 10 rigs went silent together around .*Z: /, `one line: ${opened.text}`);
  // A few more sweeps: they stay folded into the outage.
  const sweeps = 3;
  for (let i = 0; i < sweeps; i++) await f.app.alerts.sweep();
  t.equal(of('rig_offline', 'opened').length, 0, 'no rig_offline for the rigs of the outage');
  t.equal(of('fleet_outage', 'opened').length, 1, 'one outage');
  const rows = await f.app.db.reader.all<{ n: number }>("SELECT COUNT(*) AS n FROM incidents WHERE resolved_at IS NULL");
  t.equal(Number(rows[0]!.n), 1, 'one open incident in the table');
});

test('6 come back: the outage resolves listing the 2 still missing; those get their own rig_offline', async (t) => {
  await f.startTogether(...STOPPING.slice(0, 6));
  const resolved = await until('the outage resolved', () => of('fleet_outage', 'resolved')[0]);
  t.deepEqual([...(resolved.rigs ?? [])].sort(), ['rig7', 'rig8'], 'the resolution lists the rigs still missing');
  t.match(resolved.text, /still missing: rig7, rig8/, `one line: ${resolved.text}`);
  t.equal(resolved.incident.id, of('fleet_outage', 'opened')[0]!.incident.id, 'the same incident');
  await until('rig_offline for rig7 and rig8', () => of('rig_offline', 'opened').length >= 2);
  t.deepEqual(of('rig_offline', 'opened').map((e) => e.incident.subject).sort(), ['rig7', 'rig8'], 'rig7 and rig8 each get a rig_offline, nobody else');
  f.start('rig7', 'rig8');
  await until('rig7 and rig8 resolved', () => of('rig_offline', 'resolved').length >= 2);
  t.equal(of('fleet_outage', 'opened').length, 1, 'one outage in all');
});

test('a flapping rig is one incident: reopened once, later flaps folded into its count', async (t) => {
  const flaps = 4;
  for (let i = 1; i <= flaps; i++) {
    f.stop('rig9');
    await until(`rig9 offline (${i})`, async () => {
      const [row] = await f.app.db.reader.all<{ count: number; back: string | null }>("SELECT count, resolved_at AS back FROM incidents WHERE kind = 'rig_offline' AND subject = 'rig9' ORDER BY id DESC LIMIT 1");
      const details = await f.app.db.reader.all<{ details: string }>("SELECT details FROM incidents WHERE kind = 'rig_offline' AND subject = 'rig9' AND resolved_at IS NULL");
      return row && Number(row.count) === i && row.back === null && details[0] && !JSON.parse(details[0].details).back_at;
    });
    f.start('rig9');
    // Back: the first time it resolves; later it stays open, its return noted.
    await until(`rig9 back (${i})`, async () => {
      const rows = await f.app.db.reader.all<{ details: string; resolved_at: string | null }>("SELECT details, resolved_at FROM incidents WHERE kind = 'rig_offline' AND subject = 'rig9' ORDER BY id DESC LIMIT 1");
      return rows[0] && (rows[0].resolved_at !== null || JSON.parse(rows[0].details).back_at);
    });
  }
  const rows = await f.app.db.reader.all<{ id: number; count: number }>("SELECT id, count FROM incidents WHERE kind = 'rig_offline' AND subject = 'rig9'");
  t.equal(rows.length, 1, `one incident for ${flaps} times offline`);
  t.equal(Number(rows[0]!.count), flaps, 'its count says how often');
  const opened = of('rig_offline', 'opened', 'rig9');
  t.equal(opened.length, 2, 'opened, then reopened once as flapping; later flaps notify nothing');
  t.match(opened[1]!.text, /offline again: flapping, offline 2 times/, opened[1]!.text);
  t.equal(of('rig_offline', 'resolved', 'rig9').length, 1, 'resolved once so far (the first return)');
  // Steady for the flap window (10 s): resolved.
  await until('rig9 resolved after a steady stretch', () => of('rig_offline', 'resolved', 'rig9').length === 2);
  t.pass('the flapping incident resolves once the rig stayed back');
  await sleep(0);
  await f.close();
});
