import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Sequelize, Transaction } from 'sequelize';
import type sqlite3 from 'sqlite3';

import { DB_FILE } from '../../file.ts';
import type { ConnectOptions } from '../contract.ts';
import { sqliteDriver, type SqliteDriver } from './driver.ts';

/**
 * Set on every connection the driver opens (WAL itself is stored in the file). The write path
 * checkpoints the WAL itself (checkpointWal), so no COMMIT does it.
 */
export const PRAGMAS = [
  'PRAGMA journal_mode = WAL',
  'PRAGMA synchronous = NORMAL',
  'PRAGMA busy_timeout = 10000',
  'PRAGMA foreign_keys = ON',
  // What a WAL grown by a burst of writes keeps of its size once it starts over (64 MiB).
  'PRAGMA journal_size_limit = 67108864',
  'PRAGMA wal_autocheckpoint = 0',
];

/** The driver of one Sequelize instance, and the connection its WAL checkpoints run on. */
interface Connections {
  driver: SqliteDriver;
  storage: string;
  checkpointer: Promise<sqlite3.Database> | null;
}
const connections = new WeakMap<Sequelize, Connections>();

function connectionsOf(sequelize: Sequelize): Connections {
  const c = connections.get(sequelize);
  if (!c) throw new TypeError('not a SQLite database of rigd');
  return c;
}

/**
 * One PASSIVE checkpoint of the WAL on a connection of its own: copies the frames committed so far
 * back into the database file, waiting for nobody (readers and the writer go on meanwhile) and never
 * behind a long read on the read connection.
 */
export async function checkpointWal(sequelize: Sequelize): Promise<void> {
  const c = connectionsOf(sequelize);
  c.checkpointer ??= c.driver.open(c.storage);
  const conn = await c.checkpointer.catch((err: unknown) => {
    c.checkpointer = null;
    throw err;
  });
  await new Promise<void>((resolve, reject) => conn.exec('PRAGMA wal_checkpoint(PASSIVE)', (err) => (err ? reject(err) : resolve())));
}

/** After a failed write transaction: frees a connection whose COMMIT failed (see SqliteDriver.recover). */
export function releaseAbandoned(sequelize: Sequelize): Promise<void> {
  return connectionsOf(sequelize).driver.recover();
}

/** Opens (creating if needed) the SQLite database in dataDir. */
export function createSequelize(dataDir: string, opts: ConnectOptions = {}): Sequelize {
  mkdirSync(dataDir, { recursive: true });
  const storage = path.join(dataDir, DB_FILE);
  const driver = sqliteDriver(PRAGMAS.join(';'));
  const sequelize = new Sequelize({
    dialect: 'sqlite',
    dialectModule: driver.module,
    storage,
    logging: opts.logSql ? (sql: string) => process.stderr.write(`${sql}\n`) : false,
    // IMMEDIATE takes the write lock at BEGIN, so a writer in another process (the CLI)
    // waits on busy_timeout instead of failing when it would upgrade a read lock.
    transactionType: Transaction.TYPES.IMMEDIATE,
    define: { underscored: true },
  });
  connections.set(sequelize, { driver, storage, checkpointer: null });
  return sequelize;
}

/** Closes every connection. */
export async function closeSequelize(sequelize: Sequelize): Promise<void> {
  const c = connectionsOf(sequelize);
  await c.checkpointer?.catch(() => null);
  c.checkpointer = null;
  await sequelize.close();
  await c.driver.closeAll();
}
