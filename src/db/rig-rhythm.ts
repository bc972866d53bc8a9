import { QueryTypes, type Transaction } from 'sequelize';
import { forEngine } from './dialect/engine.ts';
import type { Database } from './index.ts';

/**
 * Each rig's rhythm on its row (report_interval_s, report_intervals, rhythm_at): the statements of
 * its refresh. A rig whose rhythm_at is behind its last_seen_at has reported since it was learned.
 * A refresh is one read and one write whatever the number of rigs: the write holds the one writer
 * (SQLite) or the rigs' rows (PostgreSQL) for one statement, not one per rig, so the rig reports
 * queued behind it wait for one statement.
 */

/** A rig due for its rhythm, with the times of its newest reports, newest first. */
export interface RhythmDue {
  id: string;
  newestFirst: Date[];
}

/** A rig's learned rhythm, to store. */
export interface LearnedRhythm {
  id: string;
  interval_s: number | null;
  intervals: number;
}

/**
 * Rigs that reported since their rhythm was learned, newest reports first, at most `limit`, each
 * with the times of its `reports` newest reports: one statement, an index lookup per rig (the
 * (rig_id, received_at) index), never a scan of the history.
 */
export async function rigsDueForRhythm(db: Database, limit: number, reports: number): Promise<RhythmDue[]> {
  const times = forEngine(db.dialect.name, {
    sqlite: 'SELECT json_group_array(received_at) FROM (SELECT received_at FROM rig_reports WHERE rig_id = rigs.id ORDER BY received_at DESC LIMIT ?)',
    postgres: 'SELECT json_agg(x.received_at) FROM (SELECT received_at FROM rig_reports WHERE rig_id = rigs.id ORDER BY received_at DESC LIMIT ?) x',
  });
  const rows = await db.sequelize.query<{ id: string; times: string | string[] | null }>(
    `SELECT id, (${times}) AS times FROM rigs WHERE rhythm_at IS NULL OR rhythm_at < last_seen_at ORDER BY last_seen_at DESC LIMIT ?`,
    { replacements: [reports, limit], type: QueryTypes.SELECT },
  );
  return rows.map((r) => {
    // SQLite hands the JSON array back as text, PostgreSQL's driver parsed; stored times as text.
    const list = (typeof r.times === 'string' ? JSON.parse(r.times) : (r.times ?? [])) as string[];
    return { id: r.id, newestFirst: list.map((s) => new Date(s)).sort((a, b) => b.getTime() - a.getTime()) };
  });
}

/** Stores learned rhythms in t, each up to its rig's last report as it stands now: one statement. */
export async function storeRhythms(db: Database, learned: LearnedRhythm[], t: Transaction): Promise<void> {
  if (learned.length === 0) return;
  const sql = forEngine(db.dialect.name, {
    sqlite: `UPDATE rigs SET report_interval_s = json_extract(v.value, '$[1]'), report_intervals = json_extract(v.value, '$[2]'), rhythm_at = last_seen_at
      FROM json_each(?) AS v WHERE rigs.id = json_extract(v.value, '$[0]')`,
    postgres: `UPDATE rigs SET report_interval_s = (v.value ->> 1)::double precision, report_intervals = (v.value ->> 2)::integer, rhythm_at = rigs.last_seen_at
      FROM json_array_elements(?::json) AS v WHERE rigs.id = v.value ->> 0`,
  });
  const rows = JSON.stringify(learned.map((r) => [r.id, r.interval_s, r.intervals]));
  await db.sequelize.query(sql, { replacements: [rows], transaction: t });
}
