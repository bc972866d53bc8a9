/**
 * The users table: lookups by login, name and id, and every change of a user (with the sessions a
 * change ends, in the same transaction). Uniqueness is by loginKey (any case, any Unicode form;
 * username_key, email_key);
 * a clash comes back as a value, never as a driver error. Services get User rows back.
 */
import { Op, UniqueConstraintError, type WhereOptions } from 'sequelize';
import type { Database } from './index.ts';
import { loginKey } from './login-key.ts';
import type { User } from './models/index.ts';

/** Every user, by username, as the listing reads it (plain SQL: the CLI runs it without Sequelize). */
export interface UserListRow {
  id: number;
  username: string;
  email: string;
  is_admin: number | boolean;
  rig_ui_settings: string | null;
  created_at: string | Date;
}

export function userRows(reader: Database['reader']): Promise<UserListRow[]> {
  return reader.all<UserListRow>('SELECT id, username, email, is_admin, rig_ui_settings, created_at FROM users ORDER BY username_key');
}

function loginWhere(username: string, email: string): WhereOptions<User> {
  return { [Op.or]: [{ username_key: loginKey(username) }, { email_key: loginKey(email) }] };
}

/** The user whose username or email is `login` (case-insensitively), or null. */
export function userByLogin(db: Database, login: string): Promise<User | null> {
  return db.models.User.findOne({ where: loginWhere(login, login) });
}

/** The user called `username` (case-insensitively), or null. */
export function userByName(db: Database, username: string): Promise<User | null> {
  return db.models.User.findOne({ where: { username_key: loginKey(username) } });
}

export interface NewUserRow {
  username: string;
  email: string;
  password_hash: string;
  is_admin: boolean;
}

/** A write refused by uniqueness: the user holding the name or email (when read first), or a unique index. */
export type Clash = { clash: User } | { duplicate: true };

/** Inserts a user unless one has its username or email (then that user comes back as the clash). */
export async function insertUser(db: Database, u: NewUserRow): Promise<{ user: User } | Clash> {
  const { User } = db.models;
  try {
    return await db.writes.run(async (t) => {
      const clash = await User.findOne({ where: loginWhere(u.username, u.email), transaction: t });
      if (clash) return { clash };
      const user = await User.create(
        { username: u.username, username_key: loginKey(u.username), email: u.email, email_key: loginKey(u.email), password_hash: u.password_hash, is_admin: u.is_admin },
        { transaction: t },
      );
      return { user };
    });
  } catch (err) {
    if (err instanceof UniqueConstraintError) return { duplicate: true };
    throw err;
  }
}

/** Changes user's email and admin flag (what is given), unless another user has that email; user is updated in place. */
export async function updateUser(db: Database, user: User, changes: { email?: string; is_admin?: boolean }): Promise<{ user: User } | Clash> {
  try {
    return await db.writes.run(async (t) => {
      if (changes.email !== undefined && loginKey(changes.email) !== user.email_key) {
        const clash = await db.models.User.findOne({ where: { email_key: loginKey(changes.email) }, transaction: t });
        if (clash && clash.id !== user.id) return { clash };
      }
      const values = {
        ...(changes.email !== undefined ? { email: changes.email, email_key: loginKey(changes.email) } : {}),
        ...(changes.is_admin !== undefined ? { is_admin: changes.is_admin } : {}),
      };
      await user.update(values, { transaction: t });
      return { user };
    });
  } catch (err) {
    if (err instanceof UniqueConstraintError) return { duplicate: true };
    throw err;
  }
}

/** Sets user's password hash and ends every session of the user, in one transaction; returns the sessions ended. */
export function setPasswordHash(db: Database, user: User, hash: string): Promise<number> {
  return db.writes.run(async (t) => {
    await user.update({ password_hash: hash }, { transaction: t });
    return db.models.Session.destroy({ where: { user_id: user.id }, transaction: t });
  });
}

/** Deletes user and every session of the user, in one transaction; returns the sessions ended. */
export function deleteUser(db: Database, user: User): Promise<number> {
  return db.writes.run(async (t) => {
    const n = await db.models.Session.destroy({ where: { user_id: user.id }, transaction: t });
    await user.destroy({ transaction: t });
    return n;
  });
}

/** Stores rig UI settings (JSON text, or null) on user `id`; null when there is no such user. */
export function setUserSettings(db: Database, id: number, settings: string | null): Promise<User | null> {
  return db.writes.run(async (t) => {
    const target = await db.models.User.findByPk(id, { transaction: t });
    return target ? target.update({ rig_ui_settings: settings }, { transaction: t }) : null;
  });
}
