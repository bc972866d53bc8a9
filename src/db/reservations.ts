import type { Transaction } from 'sequelize';
import type { Database } from './index.ts';

/** A new upload reservation, as stored (state 'reserved', nothing seen yet). */
export interface ReservationRow {
  rig_id: string | null;
  peer_address: string;
  key: string;
  expected_size: number;
  project: string | null;
  url_expires_at: Date;
  /** When the storage poll first looks for the object; null when storage reports it itself (embedded). */
  next_check_at: Date | null;
}

/** Inserts a batch of reservations in one statement in t; resolves to their ids, in order. */
export function insertReservations(db: Database, rows: ReservationRow[], t: Transaction, now = new Date()): Promise<number[]> {
  return db.dialect.bulkInsertIds(
    db.models.Upload,
    rows.map((r) => ({ ...r, state: 'reserved', bytes_seen: 0, checks: 0, created_at: now, updated_at: now })),
    t,
  );
}
