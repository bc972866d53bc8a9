/**
 * The login throttle's attempts in the database (table login_attempts), so that every rigd process
 * on one database counts the same attempts. One row per attempt: its login key (cleared when a
 * success or an unlock forgets the login's failures), its client key and its time in ms since the epoch.
 * Limits refuse per (login, client) and per client; the login's count over every client is only
 * reported (the throttle turns it into a delay), so a stranger's failures never refuse another client.
 *
 * The check and the insert are one atomic step. SQLite: one write transaction (BEGIN IMMEDIATE, the
 * one writer across processes). PostgreSQL: a transaction that first takes transaction-level
 * advisory locks on the login key, then on the client key (always in that order, so two
 * reservations never wait for each other in a cycle), then counts and inserts; a reservation for the
 * same login or client on any node waits for the commit and counts it.
 *
 * Times: on PostgreSQL the server's clock (nodes with skewed clocks share one window), on SQLite
 * the app's; a caller may pass its own (tests move a clock).
 */
import { QueryTypes, type Transaction } from 'sequelize';
import type { Database } from './index.ts';
import { WritePath } from './write-path.ts';
import { forEngine } from './dialect/engine.ts';

/** Advisory lock classes (two-key form, first key): "rigl" and "rigc" as 32-bit numbers. */
const LOGIN_LOCK_CLASS = 0x7269676c;
const CLIENT_LOCK_CLASS = 0x72696763;

/**
 * Now in ms since the epoch, by the server's clock, as SQL on PostgreSQL: the statement's start
 * (not the transaction's, which is before the wait for the advisory locks).
 */
const PG_NOW_MS = 'CAST(FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000) AS bigint)';

export interface AttemptLimits {
  perLogin: number;
  perClient: number;
  windowMs: number;
}

/**
 * A reservation: the attempt's row with the login's attempts in the window from every client before
 * it (loginCount), or how long to wait before the next attempt may pass (waitMs; clientWaitMs: the
 * client's part of it, 0 when only the (login, client) pair is at its limit).
 */
export type Reserved = { id: number; atMs: number; loginCount: number } | { waitMs: number; clientWaitMs: number; atMs: number };

function pg(db: Database): boolean {
  return forEngine(db.dialect.name, { postgres: true, sqlite: false });
}

/** Throttle transactions at once per process on PostgreSQL (connections of the pool they may hold). */
const THROTTLE_WRITERS = 2;
const throttleWrites = new WeakMap<Database, WritePath>();

/**
 * Runs fn in a write transaction. SQLite: through the one write path (BEGIN IMMEDIATE serialises
 * every writer). PostgreSQL: on a write path of the throttle's own, so that a login storm (whose
 * reservations from one client wait for each other's advisory lock) never holds the slots rig
 * report batches commit in.
 */
function write<T>(db: Database, fn: (t: Transaction) => Promise<T>): Promise<T> {
  if (!pg(db)) return db.writes.run(fn);
  let path = throttleWrites.get(db);
  if (!path) throttleWrites.set(db, (path = new WritePath(db.sequelize, { besideWrites: THROTTLE_WRITERS })));
  return path.runBeside(fn);
}

/** The SQL for "now" and its parameters: the given time bound, else the database's clock on PostgreSQL, else the app's. */
function nowOf(db: Database, atMs?: number): [string, number[]] {
  if (atMs === undefined && pg(db)) return [PG_NOW_MS, []];
  return ['?', [atMs ?? Date.now()]];
}

/**
 * SQL for the time of the attempt that must leave the window before key may try again (the
 * limit-th newest within the window), or NULL when key is under its limit. Parameters: key,
 * window, limit - 1 (the time, when bound, comes last: its FROM clause follows the columns).
 */
function blockerSql(columns: 'login_key = ? AND client_key' | 'client_key'): string {
  return `(SELECT at_ms FROM login_attempts WHERE ${columns} = ? AND at_ms > n.now_ms - ? ORDER BY at_ms DESC LIMIT 1 OFFSET ?)`;
}

/** SQL for the login's attempts in the window, from every client. Parameters: key, window. */
const LOGIN_COUNT_SQL = '(SELECT COUNT(*) FROM login_attempts WHERE login_key = ? AND at_ms > n.now_ms - ?)';

/** ms until the blocking attempt (a time read from SQL, or NULL) leaves the window; 0 with none. */
function waitFrom(blocker: number | string | null | undefined, nowMs: number, windowMs: number): number {
  if (blocker === null || blocker === undefined) return 0;
  return Math.max(1, Number(blocker) + windowMs - nowMs);
}

interface WaitRow {
  now_ms: number | string;
  login_at: number | string | null;
  client_at: number | string | null;
  login_count: number | string;
}

/**
 * Counts the attempts of (loginKey, clientKey) and of clientKey in the window and, when both are
 * under their limits (perLogin for the pair), inserts this attempt, atomically with the count (see
 * the file's comment). The login's attempts from every client are counted and returned.
 */
export function reserveAttempt(db: Database, loginKey: string, clientKey: string, limits: AttemptLimits, atMs?: number): Promise<Reserved> {
  return write(db, async (transaction) => {
    const query = <T>(sql: string, replacements: unknown[]) =>
      db.sequelize.query(sql, { replacements, type: QueryTypes.SELECT, transaction }) as Promise<T[]>;
    // The login's lock, then the client's (target list order), whoever asks: no cycle between waiters.
    if (pg(db)) await query('SELECT pg_advisory_xact_lock(?, hashtext(?)), pg_advisory_xact_lock(?, hashtext(?))', [LOGIN_LOCK_CLASS, loginKey, CLIENT_LOCK_CLASS, clientKey]);
    const [now, nowParams] = nowOf(db, atMs);
    const counts = [loginKey, clientKey, limits.windowMs, limits.perLogin - 1, clientKey, limits.windowMs, limits.perClient - 1, loginKey, limits.windowMs, ...nowParams];
    const waits =
      `SELECT n.now_ms AS now_ms, ${blockerSql('login_key = ? AND client_key')} AS login_at, ${blockerSql('client_key')} AS client_at, ` +
      `${LOGIN_COUNT_SQL} AS login_count FROM (SELECT ${now} AS now_ms) n`;
    const [row] = pg(db)
      ? // One round trip after the locks: count, and insert when both are under their limits.
        await query<WaitRow & { id: number | null }>(
          `WITH w AS (${waits}),
           ins AS (INSERT INTO login_attempts (login_key, client_key, at_ms)
                   SELECT ?, ?, w.now_ms FROM w WHERE w.login_at IS NULL AND w.client_at IS NULL RETURNING id)
           SELECT w.now_ms, w.login_at, w.client_at, w.login_count, (SELECT id FROM ins) AS id FROM w`,
          [...counts, loginKey, clientKey],
        )
      : await query<WaitRow & { id: number | null }>(`SELECT w.*, NULL AS id FROM (${waits}) w`, counts);
    const nowMs = Number(row!.now_ms);
    const clientWaitMs = waitFrom(row!.client_at, nowMs, limits.windowMs);
    const waitMs = Math.max(waitFrom(row!.login_at, nowMs, limits.windowMs), clientWaitMs);
    if (waitMs > 0) return { waitMs, clientWaitMs, atMs: nowMs };
    const loginCount = Number(row!.login_count);
    if (row!.id !== null && row!.id !== undefined) return { id: Number(row!.id), atMs: nowMs, loginCount };
    // SQLite: the write transaction is the only writer; its connection's last inserted row is this one.
    await db.sequelize.query('INSERT INTO login_attempts (login_key, client_key, at_ms) VALUES (?, ?, ?)', { replacements: [loginKey, clientKey, nowMs], type: QueryTypes.INSERT, transaction });
    const [inserted] = await query<{ id: number | string }>('SELECT last_insert_rowid() AS id', []);
    return { id: Number(inserted!.id), atMs: nowMs, loginCount };
  });
}

/**
 * The attempt was right: it is no failure, and the login's other attempts from the same client no
 * longer count against the login (a stranger's failures stay counted: their own limit holds).
 */
export function succeedAttempt(db: Database, id: number, loginKey: string, clientKey: string): Promise<void> {
  return write(db, async (transaction) => {
    // The login's lock (as reserve takes it first): successes of one login on several nodes take turns.
    if (pg(db)) await db.sequelize.query('SELECT pg_advisory_xact_lock(?, hashtext(?))', { replacements: [LOGIN_LOCK_CLASS, loginKey], type: QueryTypes.SELECT, transaction });
    await db.sequelize.query('UPDATE login_attempts SET login_key = NULL WHERE login_key = ? AND client_key = ?', { replacements: [loginKey, clientKey], transaction });
    await db.sequelize.query('DELETE FROM login_attempts WHERE id = ?', { replacements: [id], transaction });
  });
}

/**
 * An operator's unlock: every failure of the login, from every client, no longer counts against
 * it (the clients' own counts stay). Returns how many attempts were forgotten.
 */
export function forgetLogin(db: Database, loginKey: string): Promise<number> {
  return write(db, async (transaction) => {
    if (pg(db)) await db.sequelize.query('SELECT pg_advisory_xact_lock(?, hashtext(?))', { replacements: [LOGIN_LOCK_CLASS, loginKey], type: QueryTypes.SELECT, transaction });
    const [found] = (await db.sequelize.query('SELECT COUNT(*) AS n FROM login_attempts WHERE login_key = ?', { replacements: [loginKey], type: QueryTypes.SELECT, transaction })) as { n: number | string }[];
    await db.sequelize.query('UPDATE login_attempts SET login_key = NULL WHERE login_key = ?', { replacements: [loginKey], transaction });
    return Number(found?.n ?? 0);
  });
}

/** The attempt had no verdict: it is not counted at all. */
export function releaseAttempt(db: Database, id: number): Promise<void> {
  return write(db, async (transaction) => {
    await db.sequelize.query('DELETE FROM login_attempts WHERE id = ?', { replacements: [id], transaction });
  });
}

/** Deletes the attempts made at or before beforeMs (out of every window): the table stays bounded. */
export function pruneAttempts(db: Database, beforeMs: number): Promise<void> {
  return write(db, async (transaction) => {
    await db.sequelize.query('DELETE FROM login_attempts WHERE at_ms <= ?', { replacements: [beforeMs], transaction });
  });
}
