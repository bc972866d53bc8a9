/**
 * What the per-rig upload bounds count: a rig's open reservations and the bytes it reserved lately,
 * and the bytes every open reservation may still bring. An uploader is a rig id, or "@<address>"
 * for an address no rig is bound to.
 */
import { QueryTypes, type Transaction } from 'sequelize';
import type { Database } from './index.ts';

/** The WHERE fragment and values selecting one uploader's uploads. */
function uploaderWhere(uploader: string): [string, string[]] {
  return uploader.startsWith('@') ? ['rig_id IS NULL AND peer_address = ?', [uploader.slice(1)]] : ['rig_id = ?', [uploader]];
}

async function one(db: Database, sql: string, params: unknown[], t: Transaction): Promise<{ n: number; bytes: number; oldest: Date | null }> {
  const [row] = await db.sequelize.query<{ n: number | string; bytes: number | string | null; oldest: string | Date | null }>(sql, {
    replacements: params,
    type: QueryTypes.SELECT,
    transaction: t,
  });
  return { n: Number(row?.n ?? 0), bytes: Number(row?.bytes ?? 0), oldest: row?.oldest ? new Date(row.oldest) : null };
}

export interface UploaderUsage {
  /** Reservations still open (reserved, URL not expired). */
  open: number;
  /** When the oldest open reservation's URL expires. */
  openEarliestExpiry: Date | null;
  /** Bytes reserved since `since`, and when the oldest of those reservations was made. */
  bytesSince: number;
  bytesOldest: Date | null;
}

/** One uploader's open reservations at `now` and bytes reserved since `since`. */
export async function uploaderUsage(db: Database, uploader: string, now: Date, since: Date, t: Transaction): Promise<UploaderUsage> {
  const [where, values] = uploaderWhere(uploader);
  const open = await one(db, `SELECT COUNT(*) AS n, 0 AS bytes, MIN(url_expires_at) AS oldest FROM uploads WHERE ${where} AND state = 'reserved' AND url_expires_at > ?`, [...values, now], t);
  const day = await one(db, `SELECT COUNT(*) AS n, SUM(expected_size) AS bytes, MIN(created_at) AS oldest FROM uploads WHERE ${where} AND created_at >= ?`, [...values, since], t);
  return { open: open.n, openEarliestExpiry: open.oldest, bytesSince: day.bytes, bytesOldest: day.oldest };
}

/** Bytes every open reservation may still bring (reserved size less the bytes already seen). */
export async function openReservedBytes(db: Database, now: Date, t: Transaction): Promise<number> {
  const row = await one(db, "SELECT COUNT(*) AS n, SUM(expected_size - bytes_seen) AS bytes, NULL AS oldest FROM uploads WHERE state = 'reserved' AND url_expires_at > ?", [now], t);
  return row.bytes;
}

/** Whether `owner` holds an open reservation of `key`. */
export async function hasOpenReservation(db: Database, uploader: string, key: string, now: Date, t: Transaction): Promise<boolean> {
  const [where, values] = uploaderWhere(uploader);
  const row = await one(db, `SELECT COUNT(*) AS n, 0 AS bytes, NULL AS oldest FROM uploads WHERE ${where} AND key = ? AND state = 'reserved' AND url_expires_at > ?`, [...values, key, now], t);
  return row.n > 0;
}

/**
 * Removes expired reservations made before `before`, at most `limit` (oldest first) in one statement.
 * Returns how many.
 */
export async function deleteExpiredBefore(db: Database, before: Date, limit: number, t: Transaction): Promise<number> {
  const sql = "DELETE FROM uploads WHERE id IN (SELECT id FROM uploads WHERE state = 'expired' AND created_at < ? ORDER BY created_at LIMIT ?)";
  return (await db.sequelize.query(sql, { replacements: [before, limit], transaction: t, type: QueryTypes.BULKDELETE })) as number;
}

/** deleteExpiredBefore, `limit` rows at a time, each batch in a write transaction of its own, until none is left. Returns how many. */
export async function pruneExpiredBefore(db: Database, before: Date, limit: number): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await db.writes.run((t) => deleteExpiredBefore(db, before, limit, t));
    total += n;
    if (n < limit) return total;
  }
}
