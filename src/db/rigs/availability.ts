/**
 * What a rig's availability is computed from: the gaps between its consecutive reports, the first
 * and last report it has, and every rig's report times of a recent window. The engines differ in
 * date arithmetic, text aggregation and join syntax; the differences stay in this file.
 */
import { forEngine } from '../dialect/engine.ts';
import { secondsBetween, type Reader } from '../reader.ts';
import { sqlTime, type StoredTime } from '../stored-time.ts';

/** A gap as [start, end) in epoch ms between two consecutive reports. */
export interface ReportGap {
  start: number;
  end: number;
}

const toMs = (v: StoredTime | null) => (v === null ? null : new Date(v).getTime());

/**
 * The gaps longer than `longerThanS` between consecutive reports of one rig that end at or after
 * `since` (the report before `since` is paired too), oldest first.
 */
export async function reportGaps(reader: Reader, rigId: string, since: Date, longerThanS: number): Promise<ReportGap[]> {
  const sinceText = sqlTime(since);
  const rows = await reader.all<{ prev: StoredTime; received_at: StoredTime }>(
    `WITH r AS (
       SELECT received_at, LAG(received_at) OVER (ORDER BY received_at) AS prev
       FROM rig_reports
       WHERE rig_id = ? AND received_at >= COALESCE((SELECT MAX(received_at) FROM rig_reports WHERE rig_id = ? AND received_at < ?), ?)
     )
     SELECT prev, received_at FROM r
     WHERE prev IS NOT NULL AND ${secondsBetween(reader, 'received_at', 'prev')} > ?
     ORDER BY received_at`,
    [rigId, rigId, sinceText, sinceText, longerThanS],
  );
  return rows.map((g) => ({ start: new Date(g.prev).getTime(), end: new Date(g.received_at).getTime() }));
}

/** Epoch ms of a rig's first and last retained report (null: none). */
export async function reportBounds(reader: Reader, rigId: string): Promise<{ first: number | null; last: number | null }> {
  const [row] = await reader.all<{ first: StoredTime | null; last: StoredTime | null }>('SELECT MIN(received_at) AS first, MAX(received_at) AS last FROM rig_reports WHERE rig_id = ?', [rigId]);
  return { first: toMs(row?.first ?? null), last: toMs(row?.last ?? null) };
}

/**
 * Per rig with a report at or after `from`: the times of those reports, oldest first, as one text
 * of stored times ("2026-11-23 07:37:30.123 +00:00") joined by commas. The database only walks each
 * rig's reports of the window along the (rig_id, received_at) index; converting the times to
 * numbers in SQL cost more than reading the few the caller needs.
 */
export function reportTimesSince(reader: Reader, from: Date): Promise<{ rig_id: string; times: string }[]> {
  // PostgreSQL hands back the same text as SQLite stores; SQLite's CROSS JOIN keeps rigs as the
  // outer loop (PostgreSQL plans the join itself and has no CROSS JOIN ... ON).
  const engine = reader.engine ?? 'sqlite';
  const times = forEngine(engine, {
    postgres: `string_agg(to_char(r.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS "+00:00"'), ',' ORDER BY r.received_at)`,
    sqlite: `group_concat(r.received_at, ',' ORDER BY r.received_at)`,
  });
  const join = forEngine(engine, { postgres: 'JOIN', sqlite: 'CROSS JOIN' });
  return reader.all<{ rig_id: string; times: string }>(
    `SELECT g.id AS rig_id, ${times} AS times
     FROM rigs g ${join} rig_reports r ON r.rig_id = g.id AND r.received_at >= ?
     GROUP BY g.id`,
    [sqlTime(from)],
  );
}
