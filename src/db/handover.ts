import { QueryTypes } from 'sequelize';
import type { Database } from './index.ts';

/**
 * Uploads whose hand-over to captures never happened: stored (state uploaded, an etag), named like a
 * capture file (.sqlite, .db), and no capture from this upload nor of this object version. An upload
 * completes in one transaction and hands its capture over in the next; a process killed between
 * the two leaves one of these, which rigd serve hands over at start. Ids above afterId, oldest
 * first, at most `limit`.
 */
export async function uploadsWithoutCapture(db: Database, afterId: number, limit: number): Promise<number[]> {
  const rows = await db.sequelize.query<{ id: number }>(
    `SELECT u.id FROM uploads u
      WHERE u.id > :afterId AND u.state = 'uploaded' AND u.etag IS NOT NULL
        AND (lower(u.key) LIKE '%.sqlite' OR lower(u.key) LIKE '%.db')
        AND NOT EXISTS (SELECT 1 FROM captures c WHERE c.upload_id = u.id OR (c.key = u.key AND c.etag = replace(u.etag, '"', '')))
      ORDER BY u.id LIMIT :limit`,
    { replacements: { afterId, limit }, type: QueryTypes.SELECT },
  );
  return rows.map((r) => Number(r.id));
}
