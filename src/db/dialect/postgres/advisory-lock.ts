import type { Sequelize } from 'sequelize';
import { sessionClient } from './connection.ts';

/** The advisory lock key every rigd migration run takes ("rigd" as a 32-bit number). */
export const MIGRATION_LOCK_KEY = 0x72696764;

/**
 * Runs fn while holding PostgreSQL's session advisory lock key, on a connection of its own on the
 * session URL (database.direct_url when url is a transaction-mode pooler: a pooled connection could
 * unlock on another session, or leave the lock on a server connection another client gets).
 * Processes that start at once on a fresh database wait here, and the later ones find nothing left
 * to apply. A lock whose connection breaks is freed by the server.
 */
export async function withAdvisoryLock<T>(sequelize: Sequelize, key: number, fn: () => Promise<T>): Promise<T> {
  const client = sessionClient(sequelize, 'migrate');
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [key]);
    return await fn();
  } finally {
    await client.end().catch(() => undefined);
  }
}
