/**
 * The uploads table's statements besides reservations (reservations.ts) and the per-rig bounds
 * (upload-bounds.ts): listings, the storage poll's picks and every change of an upload's state.
 * Services hand it plain values and get typed rows back.
 */
import { Op } from 'sequelize';
import { dbTime } from './clock.ts';
import { forEngine } from './dialect/engine.ts';
import { sqlTime } from './stored-time.ts';
import type { Database } from './index.ts';
import type { Upload, UploadState } from './models/upload.ts';
import type { Reader } from './reader.ts';
import type { StoredTime } from './stored-time.ts';

/** An upload as a rig's page lists it. */
export interface RigUploadRow {
  id: number;
  key: string;
  state: UploadState;
  expected_size: number;
  bytes_seen: number;
  project: string | null;
  created_at: StoredTime;
  completed_at: StoredTime | null;
}

/** A rig's newest uploads (highest id first), at most `limit`, and how many it has in all. */
export async function rigUploads(reader: Reader, rigId: string, limit: number): Promise<{ total: number; recent: RigUploadRow[] }> {
  const [recent, count] = await Promise.all([
    reader.all<RigUploadRow>('SELECT id, key, state, expected_size, bytes_seen, project, created_at, completed_at FROM uploads WHERE rig_id = ? ORDER BY id DESC LIMIT ?', [rigId, limit]),
    reader.all<{ n: number }>('SELECT COUNT(*) AS n FROM uploads WHERE rig_id = ?', [rigId]),
  ]);
  return { total: Number(count[0]?.n ?? 0), recent };
}

/**
 * The reservation a signed PUT for `key` belongs to while its URL is valid (unexpired by the
 * database's clock, the clock the expiry was stored by): reservation `named` when given; else the
 * newest of `size` bytes, when given and there is one; else the newest.
 */
export async function liveReservation(db: Database, key: string, q: { named?: number; size?: number }): Promise<Upload | null> {
  const live = { key, url_expires_at: { [Op.gt]: dbTime(db.sequelize) }, state: { [Op.ne]: 'expired' } };
  const { Upload } = db.models;
  if (q.named !== undefined) return Upload.findOne({ where: { ...live, id: q.named } });
  if (q.size !== undefined) {
    const sized = await Upload.findOne({ where: { ...live, expected_size: q.size }, order: [['id', 'DESC']] });
    if (sized) return sized;
  }
  return Upload.findOne({ where: live, order: [['id', 'DESC']] });
}

/** The reservations of `key` still waiting for an object of `size` bytes. */
export function waitingFor(db: Database, key: string, size: number): Promise<Upload[]> {
  return db.models.Upload.findAll({ where: { key, state: 'reserved', expected_size: size } });
}

/**
 * Marks upload stored (size, etag; completed now by the database's clock) unless it already is,
 * then reads it back into `upload`. Returns how many rows changed (0: it was already uploaded).
 */
export async function completeUpload(db: Database, upload: Upload, object: { size: number; etag: string }): Promise<number> {
  const done = await db.writes.run(async (t) => {
    const [count] = await db.models.Upload.update(
      { state: 'uploaded', bytes_seen: object.size, etag: object.etag, completed_at: dbTime(db.sequelize), next_check_at: null, updated_at: dbTime(db.sequelize) },
      { where: { id: upload.id, state: { [Op.ne]: 'uploaded' } }, transaction: t, silent: true },
    );
    return count;
  });
  await upload.reload();
  return done;
}

/** The uploads with these ids, by id. */
export function uploadsByIds(db: Database, ids: number[]): Promise<Upload[]> {
  return db.models.Upload.findAll({ where: { id: ids }, order: [['id', 'ASC']] });
}

/** The newest uploads (highest id first), of one state when given, at most `limit`. */
export function newestUploads(db: Database, q: { state?: UploadState; limit: number }): Promise<Upload[]> {
  return db.models.Upload.findAll({ where: q.state ? { state: q.state } : {}, order: [['id', 'DESC']], limit: q.limit });
}

/**
 * Bytes seen so far by uploads still reserved, all in one statement: the writer is held for one
 * statement however many uploads are in flight, not one per upload.
 */
export async function saveBytesSeen(db: Database, rows: readonly (readonly [id: number, bytes: number])[]): Promise<void> {
  if (rows.length === 0) return;
  const [sql, now] = forEngine(db.dialect.name, {
    sqlite: [
      `UPDATE uploads SET bytes_seen = json_extract(v.value, '$[1]'), updated_at = ?
        FROM json_each(?) AS v WHERE uploads.id = json_extract(v.value, '$[0]') AND uploads.state = 'reserved'`,
      [sqlTime(new Date())],
    ],
    postgres: [
      `UPDATE uploads SET bytes_seen = (v.value ->> 1)::bigint, updated_at = now()
        FROM json_array_elements(?::json) AS v WHERE uploads.id = (v.value ->> 0)::integer AND uploads.state = 'reserved'`,
      [],
    ],
  });
  await db.writes.run((t) => db.sequelize.query(sql, { replacements: [...now, JSON.stringify(rows)], transaction: t }));
}

/** Marks reservations whose URL expired by `now` expired, except those in `inFlight` (a PUT still running). Returns how many. */
export function expireReservations(db: Database, now: Date, inFlight: number[]): Promise<number> {
  return db.writes.run(async (t) => {
    const [count] = await db.models.Upload.update(
      { state: 'expired', next_check_at: null, updated_at: dbTime(db.sequelize) },
      {
        where: { state: 'reserved', url_expires_at: { [Op.lte]: now }, ...(inFlight.length ? { id: { [Op.notIn]: inFlight } } : {}) },
        transaction: t,
        silent: true,
      },
    );
    return count;
  });
}

/** Reserved uploads whose URL has run out by `now`, the longest overdue first, at most `limit`. */
export function overdueReservations(db: Database, now: Date, limit: number): Promise<Upload[]> {
  return db.models.Upload.findAll({ where: { state: 'reserved', url_expires_at: { [Op.lte]: now } }, order: [['url_expires_at', 'ASC']], limit });
}

/** Marks these reservations expired (those still reserved). Returns how many. */
export function expireUploads(db: Database, ids: number[]): Promise<number> {
  if (ids.length === 0) return Promise.resolve(0);
  return db.writes.run(async (t) => {
    const [count] = await db.models.Upload.update(
      { state: 'expired', next_check_at: null, updated_at: dbTime(db.sequelize) },
      { where: { id: ids, state: 'reserved' }, transaction: t, silent: true },
    );
    return count;
  });
}

/** Reserved uploads due a look in storage at `now`, the longest due first, at most `limit`. */
export function dueChecks(db: Database, now: Date, limit: number): Promise<Upload[]> {
  return db.models.Upload.findAll({ where: { state: 'reserved', next_check_at: { [Op.lte]: now } }, order: [['next_check_at', 'ASC']], limit });
}

/** Records one more look in storage at a reserved upload and when the next is due. */
export async function deferCheck(db: Database, id: number, checks: number, next: Date): Promise<void> {
  await db.writes.run((t) =>
    db.models.Upload.update({ checks, next_check_at: next, updated_at: dbTime(db.sequelize) }, { where: { id, state: 'reserved' }, transaction: t, silent: true }),
  );
}

/** The upload that brought this version of `key` (else the newest of the key), or null. */
export async function uploadOfVersion(db: Database, key: string, etag: string): Promise<Upload | null> {
  const { Upload } = db.models;
  return (await Upload.findOne({ where: { key, etag }, order: [['id', 'DESC']] })) ?? (await Upload.findOne({ where: { key }, order: [['id', 'DESC']] }));
}

/** Per upload state: how many uploads, and the sum of their announced sizes. */
export async function uploadTally(reader: Reader): Promise<Map<string, { n: number; bytes: number }>> {
  const rows = await reader.all<{ state: string; n: number | string; bytes: number | string | null }>('SELECT state, COUNT(*) AS n, SUM(expected_size) AS bytes FROM uploads GROUP BY state');
  return new Map(rows.map((r) => [r.state, { n: Number(r.n), bytes: Number(r.bytes ?? 0) }]));
}
