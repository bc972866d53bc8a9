import { QueryTypes, type Transaction } from 'sequelize';
import type { Database } from './index.ts';

/**
 * Each rig's rhythm on its row (report_interval_s, report_intervals, rhythm_at): the statements of
 * its refresh. A rig whose rhythm_at is behind its last_seen_at has reported since it was learned.
 */

/** Rigs that reported since their rhythm was learned, newest reports first, at most limit. */
export async function rigsDueForRhythm(db: Database, limit: number): Promise<string[]> {
  const rows = await db.sequelize.query<{ id: string }>(
    'SELECT id FROM rigs WHERE rhythm_at IS NULL OR rhythm_at < last_seen_at ORDER BY last_seen_at DESC LIMIT ?',
    { replacements: [limit], type: QueryTypes.SELECT },
  );
  return rows.map((r) => r.id);
}

/** The times of a rig's newest reports, newest first (the (rig_id, received_at) index). */
export async function newestReportTimes(db: Database, rigId: string, limit: number): Promise<Date[]> {
  const rows = await db.sequelize.query<{ received_at: string | Date }>(
    'SELECT received_at FROM rig_reports WHERE rig_id = ? ORDER BY received_at DESC LIMIT ?',
    { replacements: [rigId, limit], type: QueryTypes.SELECT },
  );
  return rows.map((r) => new Date(r.received_at));
}

/** Stores a learned rhythm, up to the rig's last report as it stands now. */
export async function storeRhythm(db: Database, rigId: string, intervalS: number | null, intervals: number, t: Transaction): Promise<void> {
  await db.sequelize.query('UPDATE rigs SET report_interval_s = ?, report_intervals = ?, rhythm_at = last_seen_at WHERE id = ?', {
    replacements: [intervalS, intervals, rigId],
    transaction: t,
  });
}
