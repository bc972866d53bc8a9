import type { Database } from '../../db/index.ts';
import type { User } from '../../db/models/index.ts';
import { deleteUser, insertUser, setPasswordHash, setUserSettings, updateUser, userByLogin, userByName } from '../../db/users.ts';
import { Conflict, Forbidden, InvalidInput, NotFound, TooLarge } from '../../errors.ts';
import { appendAudit } from '../audit/log.ts';
import type { LoginThrottle } from './login-throttle.ts';
import type { Passwords } from './passwords.ts';
import { listUsers, type PublicUser } from './user-queries.ts';

/** Largest rig_ui_settings value, as JSON text. */
export const MAX_SETTINGS_BYTES = 64 * 1024;

const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
// Deliberately plain: one @, something on both sides, no spaces. Gateways use internal domains.
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,189}$/;

export type { PublicUser } from './user-queries.ts';

export function toPublicUser(u: User): PublicUser {
  return {
    id: String(u.id),
    username: u.username,
    email: u.email,
    admin: u.is_admin,
    rig_ui_settings: u.rig_ui_settings == null ? null : JSON.parse(u.rig_ui_settings),
    created_at: u.created_at,
  };
}

export interface NewUser {
  username: string;
  email: string;
  password: string;
  admin?: boolean;
}

/** Parses a user id given as a string or a number; null when it is not a canonical id. */
export function parseUserId(id: unknown): number | null {
  const text = typeof id === 'number' ? String(id) : id;
  if (typeof text !== 'string' || !/^[1-9][0-9]{0,15}$/.test(text)) return null;
  return Number(text);
}

/** Who changes a user, for the audit log: "cli:NAME" for an operator's command, "user:NAME" over the API. */
export interface ChangedBy {
  actor: string;
  client?: string | null;
}

/** What `rigd user set` may change. */
export interface UserChanges {
  email?: string;
  admin?: boolean;
}

export class UserService {
  constructor(
    private readonly db: Database,
    private readonly passwords: Passwords,
    private readonly throttle?: LoginThrottle,
  ) {}

  #audit(kind: string, by: ChangedBy | undefined, subject: string, details: Record<string, unknown> = {}): Promise<unknown> {
    return appendAudit(this.db, { kind, actor: by?.actor ?? null, client: by?.client ?? null, subject, details });
  }

  /**
   * Refuses a new user that create would refuse for its name or email (invalid, already taken),
   * before anyone is asked to type a password for it. create checks again.
   */
  async checkNew(input: { username: string; email: string }): Promise<void> {
    checkUsername(input.username);
    checkEmail(input.email);
    const existing = await this.findByLogin(input.username);
    if (existing?.username_key === input.username.toLowerCase()) throw new Conflict(`user ${input.username} already exists`, 'user_exists');
    const owner = await this.findByLogin(input.email);
    if (owner) throw new Conflict(`email ${input.email} is already used by ${owner.username}`, 'email_exists');
  }

  async create(input: NewUser, by?: ChangedBy): Promise<PublicUser> {
    checkUsername(input.username);
    checkEmail(input.email);
    const hash = await this.passwords.hash(input.password);
    const stored = await insertUser(this.db, { username: input.username, email: input.email, password_hash: hash, is_admin: input.admin ?? false });
    if ('clash' in stored) throw this.#clash(stored.clash, input);
    if ('duplicate' in stored) throw new Conflict(`user ${input.username} already exists`, 'user_exists');
    const { user } = stored;
    await this.#audit('user.add', by, user.username, { email: user.email, admin: user.is_admin });
    return toPublicUser(user);
  }

  /** Changes a user's email and admin flag (what is given); on record with the old and new values. */
  async set(username: string, changes: UserChanges, by?: ChangedBy): Promise<PublicUser> {
    if (changes.email === undefined && changes.admin === undefined) throw new InvalidInput('nothing to change: give --email, --admin or --no-admin');
    if (changes.email !== undefined) checkEmail(changes.email);
    const user = await this.getByName(username);
    const details: Record<string, { from: unknown; to: unknown }> = {};
    if (changes.email !== undefined && changes.email !== user.email) details.email = { from: user.email, to: changes.email };
    if (changes.admin !== undefined && changes.admin !== user.is_admin) details.admin = { from: user.is_admin, to: changes.admin };
    const stored = await updateUser(this.db, user, { email: changes.email, is_admin: changes.admin });
    if ('clash' in stored) throw new Conflict(`email ${changes.email} is already used by ${stored.clash.username}`, 'email_exists');
    if ('duplicate' in stored) throw new Conflict(`email ${changes.email} is already used`, 'email_exists');
    if (Object.keys(details).length > 0) await this.#audit('user.set', by, user.username, details);
    return toPublicUser(user);
  }

  /** Clears the login's failed attempts from every client (the throttle); on record. Returns how many were cleared. */
  async unlock(username: string, by?: ChangedBy): Promise<number> {
    const user = await this.getByName(username);
    if (!this.throttle) throw new Error('no login throttle to unlock');
    const cleared = await this.throttle.forget(`user:${user.id}`);
    await this.#audit('user.unlock', by, user.username, { failures_cleared: cleared });
    return cleared;
  }

  list(): Promise<PublicUser[]> {
    return listUsers(this.db.reader);
  }

  /** Finds a user by username or email, case-insensitively. */
  async findByLogin(login: string): Promise<User | null> {
    return userByLogin(this.db, login);
  }

  async getByName(username: string): Promise<User> {
    const user = await userByName(this.db, username);
    if (!user) throw new NotFound(`user ${username}`, 'user_not_found');
    return user;
  }

  /** Sets a new password and ends every session of that user. */
  async setPassword(username: string, password: string, by?: ChangedBy): Promise<PublicUser> {
    const user = await this.getByName(username);
    const hash = await this.passwords.hash(password);
    const ended = await setPasswordHash(this.db, user, hash);
    await this.#audit('user.passwd', by, user.username, { sessions_ended: ended });
    return toPublicUser(user);
  }

  async remove(username: string, by?: ChangedBy): Promise<void> {
    const user = await this.getByName(username);
    const ended = await deleteUser(this.db, user);
    await this.#audit('user.remove', by, user.username, { sessions_ended: ended });
  }

  /**
   * Stores rig UI settings (any JSON value, null included) on user `targetId`.
   * Only the user itself may do so, or an admin. `bodyUserId`, when given, must name the same user.
   * An admin's change of another user's settings is on record (`user.settings`, from `client`).
   */
  async updateSettings(actor: User, targetId: string, bodyUserId: unknown, settings: unknown, client: string | null = null): Promise<PublicUser> {
    const id = parseUserId(targetId);
    if (id === null) throw new InvalidInput(`"${targetId}" is not a user id`, [{ field: 'id', message: 'not a user id' }]);
    if (bodyUserId !== undefined && bodyUserId !== null && parseUserId(bodyUserId) !== id) {
      throw new InvalidInput('user.id in the body does not match the id in the path', [
        { field: 'user.id', message: `must equal ${targetId}` },
      ], 'id_mismatch');
    }
    if (actor.id !== id && !actor.is_admin) throw new Forbidden('a user may change only their own settings');
    const text = settings === null ? null : JSON.stringify(settings);
    if (text !== null && Buffer.byteLength(text, 'utf8') > MAX_SETTINGS_BYTES) {
      throw new TooLarge(`rig_ui_settings is larger than ${MAX_SETTINGS_BYTES} bytes`, 'settings_too_large');
    }
    const user = await setUserSettings(this.db, id, text);
    if (!user) throw new NotFound(`user ${targetId}`, 'user_not_found');
    if (user.id !== actor.id) {
      await this.#audit('user.settings', { actor: `user:${actor.username}`, client }, user.username, { bytes: text === null ? 0 : Buffer.byteLength(text, 'utf8') });
    }
    return toPublicUser(user);
  }

  #clash(existing: User, input: NewUser): Conflict {
    return existing.username_key === input.username.toLowerCase()
      ? new Conflict(`user ${input.username} already exists`, 'user_exists')
      : new Conflict(`email ${input.email} is already used by ${existing.username}`, 'email_exists');
  }
}

function checkUsername(username: string): void {
  if (!USERNAME.test(username)) {
    throw new InvalidInput('username must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit', [
      { field: 'username', message: 'invalid username' },
    ]);
  }
}

function checkEmail(email: string): void {
  if (!EMAIL.test(email)) throw new InvalidInput(`"${email}" is not an email address`, [{ field: 'email', message: 'invalid email' }]);
}
