/**
 * sqlite3 as Sequelize's SQLite dialect gets it (its public `dialectModule` option): the same module,
 * but its `Database` lends a connection that is already open, with the pragmas set, instead of
 * opening one. Sequelize opens a connection for every transaction and closes it when the transaction
 * ends; each such connection would open the file, set the pragmas and read the schema again. Here
 * Sequelize's `close()` gives the connection back, and the next transaction takes it. Everything
 * else is sqlite3's own: a lent connection is the real one, seen through a Proxy that keeps what
 * Sequelize sets on it (its own properties) to itself.
 */
import sqlite3 from 'sqlite3';

type Callback = (err: Error | null) => void;

/** Connections kept open and idle for the next transaction (the write path runs one at a time). */
const KEEP_IDLE = 2;

const BEGIN = /^\s*BEGIN\b/i;
/** The methods that run SQL text, watched for the BEGIN of a transaction. */
const RUNS_SQL = new Set<PropertyKey>(['run', 'all', 'get', 'exec', 'each']);

/** One connection lent to Sequelize, until it closes it. */
interface Loan {
  conn: sqlite3.Database;
  returned: boolean;
  /** A transaction began on it (Sequelize's transactions, never its read connection). */
  began: boolean;
  own: Map<PropertyKey, unknown>;
}

export interface SqliteDriver {
  /** The module for Sequelize's `dialectModule`. */
  module: typeof sqlite3;
  /** A connection of the caller's own (never lent), the pragmas set. */
  open(file: string): Promise<sqlite3.Database>;
  /**
   * After a failed write transaction: a transaction whose COMMIT failed (a deferred constraint, a
   * full disk) may still be open on its connection, which Sequelize then gives up without closing.
   * ROLLBACK on every lent connection a transaction began on and that was not given back, and take
   * it back. Called by the write path in turn with every other write: no other write is open.
   */
  recover(): Promise<void>;
  /** Closes every connection, lent or not. */
  closeAll(): Promise<void>;
}

function exec(conn: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => conn.exec(sql, (err) => (err ? reject(err) : resolve())));
}

/** A driver whose connections all get `pragmas` (SQL text) when they open. */
export function sqliteDriver(pragmas: string): SqliteDriver {
  const all = new Set<sqlite3.Database>();
  const idle: sqlite3.Database[] = [];
  const lent = new Set<Loan>();

  const openReal = (file: string, mode: number, cb: Callback): sqlite3.Database => {
    const conn: sqlite3.Database = new sqlite3.Database(file, mode, (err) => {
      if (err) return cb(err);
      all.add(conn);
      conn.exec(pragmas, (pragmaErr) => cb(pragmaErr ?? null));
    });
    return conn;
  };
  const closeReal = (conn: sqlite3.Database): Promise<void> => {
    if (!all.delete(conn)) return Promise.resolve();
    return new Promise((resolve) => conn.close(() => resolve()));
  };
  const giveBack = (loan: Loan): void => {
    if (loan.returned) return;
    loan.returned = true;
    lent.delete(loan);
    if (!all.has(loan.conn)) return;
    if (idle.length < KEEP_IDLE) idle.push(loan.conn);
    else void closeReal(loan.conn);
  };
  const lend = (conn: sqlite3.Database): sqlite3.Database => {
    const loan: Loan = { conn, returned: false, began: false, own: new Map() };
    lent.add(loan);
    return new Proxy(conn, {
      get(target, prop) {
        if (loan.own.has(prop)) return loan.own.get(prop);
        if (prop === 'close') {
          return (cb?: Callback) => {
            giveBack(loan);
            if (cb) process.nextTick(cb, null);
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== 'function') return value;
        if (!RUNS_SQL.has(prop)) return value.bind(target);
        return (sql: unknown, ...args: unknown[]) => {
          if (loan.returned) {
            // As sqlite3 answers a closed database: the error to the statement's callback (Sequelize
            // may run a queued query after the connection was given back), never a throw from inside
            // another callback, which would end the process.
            const err = Object.assign(new Error('SQLITE_MISUSE: the connection was closed'), { code: 'SQLITE_MISUSE', errno: 21 });
            const done = [...args].reverse().find((a): a is Callback => typeof a === 'function');
            if (!done) throw err;
            process.nextTick(done, err);
            return target;
          }
          if (typeof sql === 'string' && BEGIN.test(sql)) loan.began = true;
          return value.call(target, sql, ...args);
        };
      },
      set(_target, prop, value) {
        loan.own.set(prop, value);
        return true;
      },
    });
  };

  class Database {
    constructor(file: string, mode: number, cb: Callback) {
      const ready = idle.pop();
      if (ready) {
        process.nextTick(cb, null);
        return lend(ready);
      }
      return lend(openReal(file, mode, cb));
    }
  }

  return {
    module: Object.create(sqlite3, { Database: { value: Database } }) as typeof sqlite3,
    open: (file) =>
      new Promise((resolve, reject) => {
        const conn = openReal(file, sqlite3.OPEN_READWRITE, (err) => (err ? reject(err) : resolve(conn)));
      }),
    async recover() {
      const abandoned = [...lent].filter((loan) => loan.began);
      for (const loan of abandoned) {
        // Without an open transaction (SQLite rolled it back itself) ROLLBACK fails harmlessly.
        await exec(loan.conn, 'ROLLBACK').catch(() => undefined);
        giveBack(loan);
      }
    },
    async closeAll() {
      idle.length = 0;
      await Promise.all([...all].map(closeReal));
    },
  };
}
