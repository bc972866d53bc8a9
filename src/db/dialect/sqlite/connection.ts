import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Sequelize, Transaction } from 'sequelize';
import sqlite3 from 'sqlite3';

import { DB_FILE } from '../../file.ts';
import type { ConnectOptions } from '../contract.ts';

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

type Callback = (err: Error | null) => void;

/** The sqlite3 connections of one Sequelize instance, and the one its WAL checkpoints run on. */
interface Connections {
  open: Set<sqlite3.Database>;
  storage: string;
  Database: new (file: string, mode: number, cb: Callback) => sqlite3.Database;
  checkpointer: Promise<sqlite3.Database> | null;
}
const connections = new WeakMap<Sequelize, Connections>();

function exec(conn: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => conn.exec(sql, (err) => (err ? reject(err) : resolve())));
}

/**
 * sqlite3 with a Database class that sets PRAGMAS on every connection it opens, before anyone uses
 * it, and keeps the set of connections open (Sequelize's `dialectModule` option: everything else is
 * sqlite3's own, read through the prototype). Sequelize's SQLite dialect opens a connection of its
 * own for each transaction and closes it at the transaction's end; reads run on one connection.
 */
function driver(): { module: typeof sqlite3; open: Set<sqlite3.Database>; Database: Connections['Database'] } {
  const open = new Set<sqlite3.Database>();
  class Database extends sqlite3.Database {
    #closed = false;
    constructor(file: string, mode: number, cb: Callback) {
      super(file, mode, (err) => {
        if (err) {
          this.#closed = true;
          cb(err);
          return;
        }
        open.add(this);
        this.exec(PRAGMAS.join(';'), (pragmaErr) => cb(pragmaErr ?? null));
      });
    }

    /** Closes once: later calls (and a connection that never opened) call back at once. */
    override close(cb?: Callback): void {
      if (this.#closed) {
        cb?.(null);
        return;
      }
      this.#closed = true;
      open.delete(this);
      super.close((err) => cb?.(err));
    }
  }
  return { module: Object.create(sqlite3, { Database: { value: Database } }) as typeof sqlite3, open, Database };
}

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
  c.checkpointer ??= new Promise((resolve, reject) => {
    const conn: sqlite3.Database = new c.Database(c.storage, sqlite3.OPEN_READWRITE, (err) => (err ? reject(err) : resolve(conn)));
  });
  const conn = await c.checkpointer.catch((err: unknown) => {
    c.checkpointer = null;
    throw err;
  });
  await exec(conn, 'PRAGMA wal_checkpoint(PASSIVE)');
}

/**
 * After a write transaction failed: a transaction whose COMMIT failed (a deferred constraint, a full
 * disk) may still be open on its connection, which Sequelize gives up without closing, and would
 * hold SQLite's write lock. ROLLBACK on every open connection: where it succeeds, that connection
 * held such a transaction, and it is closed; elsewhere (no transaction open) ROLLBACK fails harmlessly.
 * Called by the write path, in turn with every other write, so no other write transaction is open.
 */
export async function releaseAbandoned(sequelize: Sequelize): Promise<void> {
  const c = connectionsOf(sequelize);
  await Promise.all(
    [...c.open].map(async (conn) => {
      const held = await exec(conn, 'ROLLBACK').then(
        () => true,
        () => false,
      );
      if (held) await new Promise<void>((resolve) => conn.close(() => resolve()));
    }),
  );
}

/** Opens (creating if needed) the SQLite database in dataDir. */
export function createSequelize(dataDir: string, opts: ConnectOptions = {}): Sequelize {
  mkdirSync(dataDir, { recursive: true });
  const storage = path.join(dataDir, DB_FILE);
  const { module, open, Database } = driver();
  const sequelize = new Sequelize({
    dialect: 'sqlite',
    dialectModule: module,
    storage,
    logging: opts.logSql ? (sql: string) => process.stderr.write(`${sql}\n`) : false,
    // IMMEDIATE takes the write lock at BEGIN, so a writer in another process (the CLI)
    // waits on busy_timeout instead of failing when it would upgrade a read lock.
    transactionType: Transaction.TYPES.IMMEDIATE,
    define: { underscored: true },
  });
  connections.set(sequelize, { open, storage, Database, checkpointer: null });
  return sequelize;
}

/** Closes every connection. */
export async function closeSequelize(sequelize: Sequelize): Promise<void> {
  const c = connectionsOf(sequelize);
  const checkpointer = await c.checkpointer?.catch(() => null);
  c.checkpointer = null;
  await sequelize.close();
  // The checkpointer, and whatever Sequelize does not know of any more.
  await Promise.all([...c.open, ...(checkpointer ? [checkpointer] : [])].map((conn) => new Promise<void>((resolve) => conn.close(() => resolve()))));
}
