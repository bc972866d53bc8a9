import type { Sequelize, Transaction } from 'sequelize';
import type { Database } from './index.ts';
import type { PgListener } from './dialect/postgres/listener.ts';
import { engineOf, forEngine } from './dialect/engine.ts';

/**
 * Wake-ups between processes that share a database. PostgreSQL: NOTIFY in the writer's transaction
 * (delivered when it commits, dropped when it rolls back) and LISTEN on one connection of its own
 * per process and channel. SQLite: nothing (its processes share a host and poll a local file).
 */

/** Whether the engine has LISTEN/NOTIFY. */
const NOTIFIES = { postgres: true, sqlite: false };

/** Sends `channel` a notification from inside the caller's transaction: delivered on commit. */
export async function notifyOnCommit(transaction: Transaction, channel: string, payload = ''): Promise<void> {
  // Sequelize keeps the instance on every Transaction; its .d.ts does not declare it.
  const { sequelize } = transaction as Transaction & { sequelize?: Sequelize };
  if (!sequelize || !forEngine(engineOf(sequelize), NOTIFIES)) return;
  await sequelize.query('SELECT pg_notify(:channel, :payload)', { replacements: { channel, payload }, transaction });
}

/** One listener per database URL and channel in this process, shared by its subscribers. */
const listeners = new Map<string, PgListener>();

/**
 * Calls `handler` on every notification of `channel` (and after each reconnection, as some may have
 * been missed); resolves once listening was tried, with the function that stops it. A no-op on SQLite.
 */
export async function listen(db: Database, channel: string, handler: () => void, onError?: (err: unknown) => void): Promise<() => Promise<void>> {
  if (!forEngine(db.dialect.name, NOTIFIES)) return async () => {};
  const [{ sessionClient, sessionUrlOf }, { PgListener }] = await Promise.all([import('./dialect/postgres/connection.ts'), import('./dialect/postgres/listener.ts')]);
  // LISTEN needs a session: database.direct_url when url is a transaction-mode pooler.
  const key = `${sessionUrlOf(db.sequelize)}\n${channel}`;
  let listener = listeners.get(key);
  if (!listener) {
    listener = new PgListener(() => sessionClient(db.sequelize, 'listen'), channel, onError);
    listeners.set(key, listener);
  }
  const mine = listener;
  mine.add(handler);
  await mine.start();
  return async () => {
    mine.delete(handler);
    if (mine.size > 0 || listeners.get(key) !== mine) return;
    listeners.delete(key);
    await mine.close();
  };
}
