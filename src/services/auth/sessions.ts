import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '../../db/index.ts';
import type { Session, User } from '../../db/models/index.ts';
import { deleteSession, deleteSessionByTokenHash, insertSession, sessionByTokenHash, sessionOfUser, touchSession } from '../../db/sessions.ts';
import { Unauthenticated } from '../../errors.ts';
import { appendAudit } from '../audit/log.ts';
import { throttleClientKey, type LoginThrottle } from './login-throttle.ts';
import type { Passwords } from './passwords.ts';
import { newToken, tokenDigest } from './tokens.ts';
import { toPublicUser, type PublicUser, type UserService } from './users.ts';

/** last_used_at is written at most this often per session (reads stay reads). */
const TOUCH_EVERY_MS = 60_000;

export interface Authenticated {
  user: User;
  session: Session;
  token: string;
}

export class SessionService {
  constructor(
    private readonly db: Database,
    private readonly users: UserService,
    private readonly passwords: Passwords,
    private readonly throttle: LoginThrottle,
    private readonly ttlMs: number,
    /** Live sessions one user may hold: a login past it ends the user's least recently used one. */
    private readonly maxPerUser: number,
  ) {}

  /**
   * Checks a login (username or email) and password and opens a session. `client` is the client's
   * address (as the VPN rule sees it). An unknown user and a wrong password give the same error
   * after the same work. The attempt is counted before the password is hashed (see LoginThrottle):
   * per user, whichever name the body gives, and per client; while the login is under attack the
   * attempt waits first (the throttle's delay). Both outcomes go to the audit log. A login past the
   * user's session bound ends their least recently used session (on record too); it never fails for it.
   */
  async login(login: string, password: string, client: string): Promise<{ token: string; user: PublicUser; expiresAt: Date; sessionId: number }> {
    const clientKey = throttleClientKey(client);
    this.throttle.checkClient(clientKey);
    const user = await this.users.findByLogin(login);
    const attempt = await this.throttle.reserve(user ? `user:${user.id}` : `name:${login.toLowerCase()}`, clientKey);
    let ok: boolean;
    try {
      if (attempt.delayMs > 0) await sleep(attempt.delayMs);
      ok = user ? await this.passwords.verify(password, user.password_hash) : await this.passwords.burn().then(() => false);
    } catch (err) {
      await attempt.release().catch(() => undefined);
      throw err;
    }
    const delay = attempt.delayMs > 0 ? { delay_ms: attempt.delayMs } : {};
    if (!user || !ok) {
      await attempt.fail();
      await appendAudit(this.db, { kind: 'login.failed', client, subject: login, details: { known_user: Boolean(user), ...delay } });
      throw new Unauthenticated('invalid_credentials', 'wrong login or password');
    }
    await attempt.succeed();
    await appendAudit(this.db, { kind: 'login.ok', actor: `user:${user.username}`, client, subject: user.username, details: delay });
    const token = newToken();
    const now = new Date();
    const expiresAt = new Date(now.getTime() + this.ttlMs);
    const { session, ended } = await insertSession(this.db, { token_hash: tokenDigest(token), user_id: user.id, expires_at: expiresAt, last_used_at: now }, this.maxPerUser);
    if (ended > 0) {
      await appendAudit(this.db, { kind: 'session.revoked', actor: `user:${user.username}`, client, subject: user.username, details: { how: 'limit', sessions_ended: ended, max_sessions_per_user: this.maxPerUser } });
    }
    return { token, user: toPublicUser(user), expiresAt, sessionId: session.id };
  }

  /** Resolves a presented token to its user and session, or throws Unauthenticated. */
  async authenticate(token: string): Promise<Authenticated> {
    // The lookup is by the token's SHA-256 (a fixed-length digest), never by the token itself.
    const session = await sessionByTokenHash(this.db, tokenDigest(token));
    if (!session) throw new Unauthenticated('invalid_token', 'the token is not valid (unknown or revoked)');
    if (session.expires_at.getTime() <= Date.now()) {
      throw new Unauthenticated('token_expired', 'the token has expired; start a new session');
    }
    if (Date.now() - session.last_used_at.getTime() > TOUCH_EVERY_MS) {
      void touchSession(this.db, session, new Date()).catch(() => undefined);
    }
    const user = session.user;
    return { user, session, token };
  }

  /**
   * The session a page cookie names (its id and user id, sealed by @hapi/cookie), or null when it
   * was revoked, has expired or belongs to another user: a revoked token logs the pages out too.
   */
  async fromCookie(sessionId: unknown, userId: unknown): Promise<{ user: User; session: Session } | null> {
    if (typeof sessionId !== 'number' || typeof userId !== 'number') return null;
    const session = await sessionOfUser(this.db, sessionId, userId);
    if (!session || session.expires_at.getTime() <= Date.now()) return null;
    return { user: session.user, session };
  }

  /** Ends a page session (logout), on record. */
  async logout(sessionId: number, by: { username: string; client: string | null }): Promise<void> {
    const ended = await deleteSession(this.db, sessionId);
    if (ended > 0) await appendAudit(this.db, { kind: 'session.revoked', actor: `user:${by.username}`, client: by.client, subject: by.username, details: { how: 'logout' } });
  }

  /** Ends the session of this token (by `by`, from client), on record in the audit log. */
  async revoke(token: string, by?: { username: string; client: string | null; how?: string }): Promise<void> {
    const ended = await deleteSessionByTokenHash(this.db, tokenDigest(token));
    if (ended > 0 && by) {
      await appendAudit(this.db, { kind: 'session.revoked', actor: `user:${by.username}`, client: by.client, subject: by.username, details: { how: by.how ?? 'api' } });
    }
  }
}
