import type { Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';
import type { Capture } from './models/capture.ts';
import type { Database } from './index.ts';

/** A capture as first recorded: one version of one object and where it came from. */
export interface NewCapture {
  bucket: string;
  key: string;
  etag: string;
  size: number | null;
  rig_id: string | null;
  project: string | null;
  upload_id: number | null;
  /** Storage's id of the version (MinIO, versioned bucket), else null. */
  version_id?: string | null;
}

/**
 * The capture of one object version (bucket, key, etag), inserted when there is none, in t:
 * `INSERT ... ON CONFLICT DO NOTHING` on the unique (bucket, key, etag), then the row read and,
 * on PostgreSQL, locked (FOR UPDATE) until t ends. Processes inserting the same version at once
 * (duplicate webhooks reaching several nodes) never see a unique violation: the later insert waits
 * for the first one's commit and does nothing, and its read sees the committed row, job included.
 * On SQLite the write transaction (BEGIN IMMEDIATE) already runs alone.
 */
export async function captureOnce(db: Database, c: NewCapture, t: Transaction): Promise<{ row: Capture; created: boolean }> {
  const now = new Date();
  // An INSERT answers with the number of rows it inserted, on either engine: 0 when the version exists.
  const [, inserted] = await db.sequelize.query(
    `INSERT INTO captures (bucket, "key", etag, size, rig_id, project, upload_id, version_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (bucket, "key", etag) DO NOTHING`,
    { replacements: [c.bucket, c.key, c.etag, c.size, c.rig_id, c.project, c.upload_id, c.version_id ?? null, now, now], type: QueryTypes.INSERT, transaction: t },
  );
  const row = await db.models.Capture.findOne({ where: { bucket: c.bucket, key: c.key, etag: c.etag }, transaction: t, lock: t.LOCK.UPDATE });
  if (!row) throw new Error(`the capture of ${c.bucket}/${c.key} (${c.etag}) is missing right after its insert`);
  return { row, created: inserted > 0 };
}
