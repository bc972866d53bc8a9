/** Which rig owns each object key (object_owners): the first to reserve it. */
import { QueryTypes, type Transaction } from 'sequelize';
import type { Database } from './index.ts';

/**
 * Claims `key` for `owner` unless someone owns it already (one statement, safe against a concurrent
 * claim); returns the owner after the claim.
 */
export async function claimKey(db: Database, key: string, owner: string, t: Transaction, now = new Date()): Promise<string> {
  await db.sequelize.query('INSERT INTO object_owners (key, owner, created_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING', {
    replacements: [key, owner, now],
    transaction: t,
  });
  const rows = await db.sequelize.query<{ owner: string }>('SELECT owner FROM object_owners WHERE key = ?', {
    replacements: [key],
    type: QueryTypes.SELECT,
    transaction: t,
  });
  return rows[0]?.owner ?? owner;
}

/** Hands `key` from `from` to `to` (a claim never used: no object, no open reservation). */
export async function transferKey(db: Database, key: string, from: string, to: string, t: Transaction, now = new Date()): Promise<void> {
  await db.sequelize.query('UPDATE object_owners SET owner = ?, created_at = ? WHERE key = ? AND owner = ?', { replacements: [to, now, key, from], transaction: t });
}
