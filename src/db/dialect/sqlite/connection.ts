import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Sequelize, Transaction } from 'sequelize';
import type { Database as SqliteDatabase } from 'sqlite3';

import { DB_FILE } from '../../file.ts';
import type { ConnectOptions } from '../contract.ts';

/** Set on every connection the driver opens (WAL itself is stored in the file). */
export const PRAGMAS = [
  'PRAGMA journal_mode = WAL',
  'PRAGMA synchronous = NORMAL',
  'PRAGMA busy_timeout = 10000',
  'PRAGMA foreign_keys = ON',
  // What a WAL grown by a burst of writes keeps of its size once it starts over (64 MiB).
  'PRAGMA journal_size_limit = 67108864',
];

/** The connection the write path's WAL checkpoints run on (see checkpointWal). */
const CHECKPOINTER = 'checkpoint';

type SqliteConnection = SqliteDatabase & { uuid?: string; rigdPragmas?: boolean };
interface SqliteConnectionManager {
  connections: Record<string, SqliteConnection>;
  getConnection(options?: { uuid?: string }): Promise<SqliteConnection>;
  releaseConnection(connection: SqliteConnection, force?: boolean): void;
  destroyConnection(connection: SqliteConnection): Promise<void>;
  /** Set by pinConnections: the writer connection, marked busy, when it is open and free; else null. */
  takeOpenWriter?: () => SqliteConnection | null;
}

function exec(conn: SqliteConnection, sql: string): Promise<void> {
  return new Promise((resolve, reject) => conn.exec(sql, (err) => (err ? reject(err) : resolve())));
}

/**
 * Sequelize's SQLite driver opens a fresh sqlite3 connection for every managed transaction,
 * closes it afterwards and runs no afterConnect hooks on it, so per-connection pragmas would
 * never reach transactions, and concurrent transactions would fight for the write lock.
 *
 * rigd writes through one serialised write path (src/db/write-path.ts), so it keeps two
 * connections: "default" for reads and one persistent "writer" that every transaction uses, and a
 * third for the write path's WAL checkpoints, so that they never wait behind a long read.
 * Each gets the pragmas when opened. A second transaction while one is open is a programming
 * error (a write that bypassed the write path) and fails loudly instead of corrupting state.
 * When a COMMIT or ROLLBACK fails (a full disk: SQLITE_FULL, SQLITE_IOERR), Sequelize "destroys" the
 * connection instead of releasing it; here that rolls back whatever is left of the transaction and
 * frees the writer, so the next write runs as soon as the disk takes it again.
 * This relies on the v6 connection-manager contract (getConnection({uuid}) / releaseConnection /
 * destroyConnection); test/db/write-path.test.ts checks it.
 */
function pinConnections(sequelize: Sequelize): void {
  const cm = sequelize.connectionManager as unknown as SqliteConnectionManager;
  const getConnection = cm.getConnection.bind(cm);
  let writerBusy = false;

  cm.getConnection = async (options = {}) => {
    const isTransaction = options.uuid !== undefined && options.uuid !== 'default' && options.uuid !== CHECKPOINTER;
    if (isTransaction) {
      if (writerBusy) throw new Error('a write transaction is already open: writes must go through the write path');
      writerBusy = true;
    }
    try {
      const conn = await getConnection({ ...options, uuid: isTransaction ? 'writer' : (options.uuid ?? 'default') });
      if (!conn.rigdPragmas) {
        for (const sql of PRAGMAS) await exec(conn, sql);
        conn.rigdPragmas = true;
      }
      return conn;
    } catch (err) {
      if (isTransaction) writerBusy = false;
      throw err;
    }
  };
  // The writer, taken at once when it is open and free (no trip through the event loop's queue).
  cm.takeOpenWriter = () => {
    const conn = cm.connections.writer;
    if (writerBusy || !conn?.rigdPragmas) return null;
    writerBusy = true;
    return conn;
  };
  cm.releaseConnection = (connection) => {
    // Transactions release the writer when they end; keep it open for the next one.
    if (connection.uuid !== undefined) writerBusy = false;
  };
  cm.destroyConnection = async (connection) => {
    // SQLite may or may not have rolled the transaction back itself; without one, ROLLBACK fails harmlessly.
    await exec(connection, 'ROLLBACK').catch(() => undefined);
    if (connection === cm.connections.writer) writerBusy = false;
  };
}

/**
 * One PASSIVE checkpoint of the WAL on the checkpoint connection: copies the frames committed so far
 * back into the database file, waiting for nobody (readers and the writer go on meanwhile).
 */
export async function checkpointWal(sequelize: Sequelize): Promise<void> {
  const cm = sequelize.connectionManager as unknown as SqliteConnectionManager;
  const conn = await cm.getConnection({ uuid: CHECKPOINTER });
  await exec(conn, 'PRAGMA wal_checkpoint(PASSIVE)');
}

/**
 * Runs fn with the writer connection's exec (SQL text of several statements, run in one trip through
 * the thread pool), holding the writer as a transaction does (WritePath.runScript).
 */
export async function withWriter<T>(sequelize: Sequelize, fn: (exec: (sql: string) => Promise<void>) => Promise<T>): Promise<T> {
  const cm = sequelize.connectionManager as unknown as SqliteConnectionManager;
  const conn = cm.takeOpenWriter?.() ?? (await cm.getConnection({ uuid: 'script' }));
  conn.uuid = 'script';
  try {
    return await fn((sql) => exec(conn, sql));
  } finally {
    cm.releaseConnection(conn);
    conn.uuid = undefined;
  }
}

/** Opens (creating if needed) the SQLite database in dataDir. */
export function createSequelize(dataDir: string, opts: ConnectOptions = {}): Sequelize {
  mkdirSync(dataDir, { recursive: true });
  const sequelize = new Sequelize({
    dialect: 'sqlite',
    storage: path.join(dataDir, DB_FILE),
    logging: opts.logSql ? (sql: string) => process.stderr.write(`${sql}\n`) : false,
    // IMMEDIATE takes the write lock at BEGIN, so a writer in another process (the CLI)
    // waits on busy_timeout instead of failing when it would upgrade a read lock.
    transactionType: Transaction.TYPES.IMMEDIATE,
    define: { underscored: true },
  });
  pinConnections(sequelize);
  return sequelize;
}

/** Closes both connections. */
export async function closeSequelize(sequelize: Sequelize): Promise<void> {
  const cm = sequelize.connectionManager as unknown as SqliteConnectionManager;
  const conns = Object.values(cm.connections);
  cm.connections = {};
  // A connection whose open failed (SQLITE_CANTOPEN) never calls back from close(): skip it.
  const open = conns.filter((c) => (c as SqliteConnection & { open?: boolean }).open !== false);
  await Promise.all(open.map((c) => new Promise<void>((resolve) => c.close(() => resolve()))));
}
