// test: alone (rigs reporting every second; outage timing)
// An open fleet outage covers the rigs that went silent with it, not every rig that goes dark after:
// 6 rigs report every second, 4 stop at once (one fleet_outage) and never come back, so the outage
// stays open. Later rig6, which kept reporting, goes dark: the operator is told (its own
// rig_offline), it is not folded into the old outage without a word.
import test from 'tape';
import { startFleet, until, type Fleet } from './fleet.ts';

let f: Fleet;
const IDS = Array.from({ length: 6 }, (_, i) => `rig${i + 1}`);
const GONE = IDS.slice(0, 4);
const ALERTS = { min_silence_s: 1, check_interval_s: 1, outage_share: 0.5 };

const of = (kind: string, event: string, subject?: string) => f.events.filter((e) => e.incident.kind === kind && e.event === event && (subject === undefined || e.incident.subject === subject));

async function outageRigs(): Promise<string[]> {
  const rows = await f.app.db.reader.all<{ details: string }>("SELECT details FROM incidents WHERE kind = 'fleet_outage' AND resolved_at IS NULL");
  return rows[0] ? ((JSON.parse(rows[0].details).rigs as string[]) ?? []) : [];
}

test('setup: 6 rigs report every second until each has a rhythm; 4 stop at once: one fleet_outage', async (t) => {
  f = await startFleet(51, IDS.map((id) => ({ id, everyMs: 1000 })), { alerts: ALERTS });
  await until('a rhythm for all 6', async () => {
    const rows = await f.app.db.reader.all<{ n: number }>('SELECT COUNT(*) AS n FROM rigs WHERE report_intervals >= 4');
    return Number(rows[0]?.n ?? 0) === 6;
  });
  f.stop(...GONE);
  const opened = await until('the fleet outage', () => of('fleet_outage', 'opened')[0]);
  t.deepEqual([...(opened.rigs ?? [])].sort(), GONE, 'it names the 4 silent rigs');
});

test('rig6 goes dark long after the outage opened: its own rig_offline, not folded silently into the outage', async (t) => {
  // Well past the outage's opening: rig6 reports a few times more, a few sweeps run.
  const seen = f.answers.get('rig6')?.length ?? 0;
  await until('3 more reports of rig6', () => (f.answers.get('rig6') ?? []).slice(seen).filter((s) => s === 200).length >= 3);
  for (let i = 0; i < 3; i++) await f.app.alerts.sweep();
  f.stop('rig6');
  // Either outcome ends the wait: a rig_offline for rig6, or rig6 listed in the old outage.
  await until('rig6 judged', async () => of('rig_offline', 'opened', 'rig6').length > 0 || (await outageRigs()).includes('rig6'));
  t.equal(of('rig_offline', 'opened', 'rig6').length, 1, 'rig6 offline is notified');
  t.notOk((await outageRigs()).includes('rig6'), 'the outage still names only the rigs that went silent with it');
  t.equal(of('fleet_outage', 'opened').length, 1, 'still one outage');
  if (of('rig_offline', 'opened', 'rig6').length === 0) return;
  f.start('rig6');
  await until('rig6 resolved', () => of('rig_offline', 'resolved', 'rig6')[0]);
  t.pass('rig6 resolved once back');
});

test('teardown', async () => {
  await f.close();
});
