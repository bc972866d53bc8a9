// A rigs' rhythm refresh (the alerts sweep), on a real database of either engine: each rig's interval
// learned from its own newest reports, and the refresh is one read and one write whatever the number of
// rigs, so the rig reports queued behind the write wait for one statement, not one per rig.
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { storeRigReports, type ReportRow } from '../../src/db/rigs.ts';
import { refreshRhythms, RHYTHM_BATCH, RHYTHM_INTERVALS } from '../../src/services/alerts/rhythm.ts';
import { withDb } from '../helpers/dialect.ts';
import { recordStatements } from '../helpers/statements.ts';
import { tmpDir } from '../helpers/tmp.ts';

const T0 = Date.parse('2026-11-01T00:00:00Z');

function report(id: string, at: number): ReportRow {
  return { rig_id: id, received_at: new Date(at), serial: `s-${id}`, lan_ip: null, peer_address: '10.144.112.2', version: '1.0', branch: 'main', latitude: null, longitude: null };
}

test('rhythms: each rig its own median interval, up to its last report; one read and one write for hundreds of rigs', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    const rows: ReportRow[] = [];
    // every10: 40 reports 10 s apart (only the newest 21 count); every5: 5 s apart with 0.2 s retries
    // (bursts, left out); once: a single report (no interval yet); many-N: 600 rigs, 3 reports 30 s apart.
    for (let k = 0; k < 40; k++) rows.push(report('every10', T0 + k * 10_000));
    for (let k = 0; k < 25; k++) rows.push(report('every5', T0 + k * 5_000), report('every5', T0 + k * 5_000 + 200));
    rows.push(report('once', T0));
    const many = Array.from({ length: 600 }, (_, i) => `many-${String(i).padStart(3, '0')}`);
    for (const id of many) for (let k = 0; k < 3; k++) rows.push(report(id, T0 + k * 30_000));
    for (let i = 0; i < rows.length; i += 500) await db.writes.run((tx) => storeRigReports(db, rows.slice(i, i + 500), tx));

    const { statements, stop } = recordStatements(db.sequelize);
    const first = await refreshRhythms(db);
    const second = await refreshRhythms(db);
    const third = await refreshRhythms(db);
    stop();
    t.equal(first, RHYTHM_BATCH, `the first sweep refreshes at most ${RHYTHM_BATCH} rigs`);
    t.equal(first + second, 603, 'the second sweep refreshes the rest');
    t.equal(third, 0, 'then none is due');
    const updates = statements.filter((s) => /UPDATE\s+"?rigs"?\s+SET\s+"?report_interval_s/i.test(s));
    const reads = statements.filter((s) => /FROM\s+"?rig_reports"?/i.test(s));
    t.equal(updates.length, 2, `one UPDATE per sweep that found rigs (${updates.length} for ${first + second} rigs)`);
    t.equal(reads.length, 3, `one read of the history per sweep (${reads.length})`);

    const stored = await db.reader.all<{ id: string; report_interval_s: number | null; report_intervals: number | null; rhythm_at: string | Date | null; last_seen_at: string | Date }>(
      "SELECT id, report_interval_s, report_intervals, rhythm_at, last_seen_at FROM rigs WHERE id IN ('every10', 'every5', 'once', 'many-000', 'many-599') ORDER BY id",
    );
    const by = new Map(stored.map((r) => [r.id, r]));
    t.deepEqual([Number(by.get('every10')!.report_interval_s), Number(by.get('every10')!.report_intervals)], [10, RHYTHM_INTERVALS], 'every10: 10 s from the newest 21 reports');
    t.deepEqual([Number(by.get('every5')!.report_interval_s), Number(by.get('every5')!.report_intervals)], [4.8, 10], 'every5: the 0.2 s retries left out, the median of the rest');
    t.equal(by.get('once')!.report_interval_s, null, 'once: no interval from a single report');
    t.equal(Number(by.get('once')!.report_intervals), 0, 'once: zero intervals');
    for (const id of ['many-000', 'many-599']) t.equal(Number(by.get(id)!.report_interval_s), 30, `${id}: 30 s`);
    for (const r of stored) t.equal(new Date(r.rhythm_at!).getTime(), new Date(r.last_seen_at).getTime(), `${r.id}: learned up to its last report`);
  } finally {
    await db.close();
  }
});
