import type { Sequelize } from 'sequelize';

/** The advisory lock key every rigd migration run takes ("rigd" as a 32-bit number). */
export const MIGRATION_LOCK_KEY = 0x72696764;

interface PgClient {
  query(sql: string, params?: unknown[]): Promise<unknown>;
}
interface PgConnectionManager {
  getConnection(options?: object): Promise<PgClient>;
  releaseConnection(connection: PgClient): void;
}

/**
 * Runs fn while holding PostgreSQL's session advisory lock key, on a connection of its own for the
 * whole time (a pooled connection could otherwise unlock on another session). Processes that start
 * at once on a fresh database wait here, and the later ones find nothing left to apply.
 */
export async function withAdvisoryLock<T>(sequelize: Sequelize, key: number, fn: () => Promise<T>): Promise<T> {
  const cm = sequelize.connectionManager as unknown as PgConnectionManager;
  const conn = await cm.getConnection({ type: 'write' });
  try {
    await conn.query('SELECT pg_advisory_lock($1)', [key]);
    try {
      return await fn();
    } finally {
      await conn.query('SELECT pg_advisory_unlock($1)', [key]);
    }
  } finally {
    cm.releaseConnection(conn);
  }
}
