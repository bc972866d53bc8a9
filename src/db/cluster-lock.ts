import type { Database } from './index.ts';
import { forEngine } from './dialect/engine.ts';

/**
 * A lock one process of all those sharing the database holds at a time, for work that must run on
 * one node only. PostgreSQL: a session advisory lock on a connection of its own (freed by the server
 * when its holder dies; after a restart or failover the next try connects again and takes it if
 * free). SQLite: always held (one host, one node).
 */
export interface ClusterLock {
  /** True when this process holds the lock now; takes it if free. Throws when the database is unreachable (not held then). */
  tryHold(): Promise<boolean>;
  /** Gives it up. */
  release(): Promise<void>;
}

/** The advisory lock key of rigd's cluster duties ("rigd" and 1, as a 64-bit number). */
export const DUTIES_LOCK_KEY = 0x72696764_00000001n;

/** The application_name prefix of the duties lock's session: "rigd duties <run id>" (src/db/diagnostics/duties.ts reads it). */
export const DUTIES_SESSION = 'duties';

export interface ClusterLockOptions {
  /** @default DUTIES_LOCK_KEY */
  key?: bigint;
  /**
   * How long the holder may go without trying before the server frees the lock (a frozen holder
   * loses it to another node); the holder tries more often than that. 0 (default): never freed
   * while the connection stands.
   */
  idleLimitMs?: number;
  /**
   * The holder's run id (the node registry's run_id), carried in the session's application_name
   * ("rigd duties <run id>", well under PostgreSQL's 63 bytes) so that others can tell who holds it.
   */
  holder?: string;
}

export async function openClusterLock(db: Database, opts: ClusterLockOptions = {}): Promise<ClusterLock> {
  const { key = DUTIES_LOCK_KEY, idleLimitMs = 0, holder } = opts;
  // One host (SQLite): the data_dir's serve lock already makes this process the only one.
  if (!forEngine(db.dialect.name, { postgres: true, sqlite: false })) return { tryHold: async () => true, release: async () => {} };
  const [{ sessionClient }, { SessionLock }] = await Promise.all([import('./dialect/postgres/connection.ts'), import('./dialect/postgres/session-lock.ts')]);
  // A session lock needs a session: database.direct_url when url is a transaction-mode pooler.
  return new SessionLock(() => sessionClient(db.sequelize, holder ? `${DUTIES_SESSION} ${holder}` : DUTIES_SESSION), key, idleLimitMs);
}
