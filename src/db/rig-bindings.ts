/**
 * Which VPN address each rig id is bound to (rigs.bound_address) and how many ids each address
 * registered lately (rigs.registered_from): the statements of rig identity.
 */
import { QueryTypes, type Transaction } from 'sequelize';
import type { Database } from './index.ts';

/** A rig's binding as a report is judged against it. */
export interface BindingRow {
  id: string;
  bound_address: string | null;
  last_seen_at: Date;
}

/** Ids registered by one address since a time, and the oldest of them. */
export interface Registrations {
  count: number;
  oldest: Date | null;
}

function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(',');
}

async function select<T extends object>(db: Database, sql: string, params: unknown[], t?: Transaction): Promise<T[]> {
  return db.sequelize.query<T>(sql, { replacements: params, type: QueryTypes.SELECT, ...(t ? { transaction: t } : {}) });
}

/**
 * The bindings of these rig ids (absent ids: not registered). In t on PostgreSQL the rows are locked
 * until t ends, so batches committing at once judge one rig in turn.
 */
export async function readBindings(db: Database, ids: string[], t?: Transaction): Promise<Map<string, BindingRow>> {
  const out = new Map<string, BindingRow>();
  if (ids.length === 0) return out;
  const lock = t && db.dialect.name === 'postgres' ? ' ORDER BY id FOR UPDATE' : '';
  const rows = await select<{ id: string; bound_address: string | null; last_seen_at: string | Date }>(
    db,
    `SELECT id, bound_address, last_seen_at FROM rigs WHERE id IN (${placeholders(ids.length)})${lock}`,
    ids,
    t,
  );
  for (const r of rows) out.set(r.id, { id: r.id, bound_address: r.bound_address, last_seen_at: new Date(r.last_seen_at) });
  return out;
}

/** Per address: the rig ids it registered at or after `since`. */
export async function readRegistrations(db: Database, addresses: string[], since: Date, t?: Transaction): Promise<Map<string, Registrations>> {
  const out = new Map<string, Registrations>();
  if (addresses.length === 0) return out;
  const rows = await select<{ registered_from: string; n: number | string; oldest: string | Date | null }>(
    db,
    `SELECT registered_from, COUNT(*) AS n, MIN(created_at) AS oldest FROM rigs
      WHERE registered_from IN (${placeholders(addresses.length)}) AND created_at >= ? GROUP BY registered_from`,
    [...addresses, since],
    t,
  );
  for (const r of rows) out.set(r.registered_from, { count: Number(r.n), oldest: r.oldest === null ? null : new Date(r.oldest) });
  return out;
}

/** Binds each rig id to its address in t. */
export async function writeBindings(db: Database, bindings: { id: string; address: string }[], t: Transaction): Promise<void> {
  for (const b of bindings) {
    await db.sequelize.query('UPDATE rigs SET bound_address = ? WHERE id = ?', { replacements: [b.address, b.id], transaction: t });
  }
}

/** Binds rig `id` to `address` (null: unbound, the next report binds it). False when there is no such rig. */
export async function setBinding(db: Database, id: string, address: string | null): Promise<boolean> {
  return db.writes.run(async (t) => {
    const [n] = await db.models.Rig.update({ bound_address: address }, { where: { id }, transaction: t });
    return n === 1;
  });
}

/** The rig bound to `address` that reported last, or null. */
export async function rigBoundTo(db: Database, address: string): Promise<string | null> {
  const rows = await select<{ id: string }>(db, 'SELECT id FROM rigs WHERE bound_address = ? ORDER BY last_seen_at DESC LIMIT 1', [address]);
  return rows[0]?.id ?? null;
}
