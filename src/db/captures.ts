/**
 * The captures table's statements besides the first record of a version (capture-rows.ts): the
 * listings, the filters of `rigd captures`, reimport's picks. A capture's state is its job's, read
 * through the join; services hand plain values and get typed rows back.
 */
import { captureStateSql, type CaptureState } from './models/capture-state.ts';
import type { Reader } from './reader.ts';
import type { StoredTime } from './stored-time.ts';

/** A capture as a rig's page lists it. */
export interface RigCaptureRow {
  id: number;
  key: string;
  state: CaptureState;
  size: number | null;
  project: string | null;
  error_code: string | null;
  created_at: StoredTime;
  /** The later of the capture's and its job's. */
  updated_at: StoredTime;
}

/** A rig's newest captures (highest id first), at most `limit`, and how many it has in all. */
export async function rigCaptures(reader: Reader, rigId: string, limit: number): Promise<{ total: number; recent: RigCaptureRow[] }> {
  const [recent, count] = await Promise.all([
    reader.all<RigCaptureRow>(
      `SELECT c.id, c.key, ${captureStateSql('j')} AS state, c.size, c.project, j.error_code,
              c.created_at, CASE WHEN j.updated_at > c.updated_at THEN j.updated_at ELSE c.updated_at END AS updated_at
         FROM captures c LEFT JOIN jobs j ON j.id = c.job_id
        WHERE c.rig_id = ? ORDER BY c.id DESC LIMIT ?`,
      [rigId, limit],
    ),
    reader.all<{ n: number }>('SELECT COUNT(*) AS n FROM captures WHERE rig_id = ?', [rigId]),
  ]);
  return { total: Number(count[0]?.n ?? 0), recent };
}
