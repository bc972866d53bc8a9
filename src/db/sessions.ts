/**
 * The sessions table: a session is stored by its token's SHA-256 (the digest is computed by the
 * caller), read back with its user, touched, and ended.
 */
import { Op } from 'sequelize';
import type { Database } from './index.ts';
import type { Session, User } from './models/index.ts';

export interface NewSessionRow {
  token_hash: string;
  user_id: number;
  expires_at: Date;
  last_used_at: Date;
}

/** A session with its user. */
export type SessionWithUser = Session & { user: User };

/**
 * Stores a new session and, in the same transaction, removes every session that has expired by
 * then (by the expires_at index), so session rows never outgrow the sessions still alive, and ends
 * the user's least recently used sessions past `maxPerUser` (the new one included). The user's row
 * is locked first (PostgreSQL; SQLite writes one at a time anyway), so concurrent logins of one
 * user take turns and the bound holds after all of them. Returns the new session and how many of
 * the user's live sessions it ended.
 */
export function insertSession(db: Database, row: NewSessionRow, maxPerUser: number): Promise<{ session: Session; ended: number }> {
  const { Session, User } = db.models;
  return db.writes.run(async (t) => {
    await User.findByPk(row.user_id, { attributes: ['id'], transaction: t, lock: t.LOCK.UPDATE });
    await Session.destroy({ where: { expires_at: { [Op.lte]: row.last_used_at } }, transaction: t });
    const older = await Session.findAll({
      attributes: ['id'],
      where: { user_id: row.user_id },
      order: [['last_used_at', 'DESC'], ['id', 'DESC']],
      offset: maxPerUser - 1,
      transaction: t,
    });
    const ended = older.length > 0 ? await Session.destroy({ where: { id: older.map((s) => s.id) }, transaction: t }) : 0;
    const session = await Session.create(row, { transaction: t });
    return { session, ended };
  });
}

/** The session stored under this token digest, with its user, or null. */
export async function sessionByTokenHash(db: Database, tokenHash: string): Promise<SessionWithUser | null> {
  const { Session, User } = db.models;
  return (await Session.findOne({ where: { token_hash: tokenHash }, include: [{ model: User, as: 'user', required: true }] })) as SessionWithUser | null;
}

/** Session `id` if it belongs to user `userId`, with its user, or null. */
export async function sessionOfUser(db: Database, id: number, userId: number): Promise<SessionWithUser | null> {
  const { Session, User } = db.models;
  return (await Session.findOne({ where: { id, user_id: userId }, include: [{ model: User, as: 'user', required: true }] })) as SessionWithUser | null;
}

/** Records that session was used at `at`. */
export async function touchSession(db: Database, session: Session, at: Date): Promise<void> {
  await db.writes.run((t) => session.update({ last_used_at: at }, { transaction: t }));
}

/** Ends session `id`; returns how many sessions ended (0 or 1). */
export function deleteSession(db: Database, id: number): Promise<number> {
  return db.writes.run((t) => db.models.Session.destroy({ where: { id }, transaction: t }));
}

/** Ends the session stored under this token digest; returns how many ended (0 or 1). */
export function deleteSessionByTokenHash(db: Database, tokenHash: string): Promise<number> {
  return db.writes.run((t) => db.models.Session.destroy({ where: { token_hash: tokenHash }, transaction: t }));
}
