import type { Model, ModelStatic, Sequelize, Transaction } from 'sequelize';
import type { DomainError } from '../../errors.ts';
import type { DialectName } from './engine.ts';
import type { LiteReader } from '../reader.ts';
import type { WritePath } from '../write-path.ts';

/** Options of a connection, whatever the engine. */
export interface ConnectOptions {
  /** Log every SQL statement (debug). */
  logSql?: boolean;
  /** database.url: the server's URL (PostgreSQL); SQLite ignores it and uses data_dir. */
  url?: string;
  /** PostgreSQL's connection settings (database.*); SQLite ignores them. */
  postgres?: Partial<PostgresSettings>;
}

/** The database.* keys of a PostgreSQL connection (config.example.yaml says what each does). */
export interface PostgresSettings {
  direct_url: string;
  pool_max: number;
  acquire_timeout_ms: number;
  lock_timeout_s: number;
  statement_timeout_s: number;
  idle_in_transaction_timeout_s: number;
  keepalive_s: number;
}

/** A row of a model's table, by column name. */
export type Row = Record<string, unknown>;

/** A value insertRows binds: text, a number, NULL or a date (stored as the dialect stores DATE columns). */
export type RawValue = string | number | null | Date;

/** What an insert does with a row whose conflict columns exist: overwrite the update columns. */
/** One insertRows: rows of values in `columns` order into model's table. */
export interface RowsInsert {
  model: ModelStatic<Model>;
  columns: readonly string[];
  rows: RawValue[][];
  onConflict?: OnConflict;
}

export interface OnConflict {
  conflict: readonly string[];
  update: readonly string[];
  /**
   * Only rows for which this holds are updated: SQL over the table and `excluded`, with `param(i)`
   * standing for whereValues[i]. Its text must not change with the values (the statement text is
   * made once per shape and kept).
   */
  where?: (param: (i: number) => string) => string;
  /** Bound after the rows; a Date as the dialect stores DATE columns. */
  whereValues?: readonly RawValue[];
}

/**
 * Everything rigd does that depends on the database engine, and nothing else. Services never see
 * it: they call the domain functions of src/db/ (reservations.ts, rigs.ts, Database.ping, ...)
 * which call it. Two implementations: SQLite (./sqlite/) and PostgreSQL (./postgres/); the engine
 * is chosen in ./index.ts.
 */
export interface Dialect {
  readonly name: DialectName;
  /**
   * Several processes write at once and rows are locked by the statements that will change them
   * (SELECT ... FOR UPDATE, SKIP LOCKED); false: one writer at a time holds the whole database.
   */
  readonly rowLocks: boolean;
  /**
   * The database is a server several rigd nodes may share (PostgreSQL), not a file of this host
   * (SQLite): secrets the nodes must agree on live in it, and per-host state lives in data_dir.
   */
  readonly sharedByNodes: boolean;
  /** A Sequelize instance on data_dir's database with every connection set up the way the write path needs it (per-connection settings). */
  connect(dataDir: string, opts?: ConnectOptions): Sequelize;
  /** Closes every connection connect() opened. */
  close(sequelize: Sequelize): Promise<void>;
  /**
   * The process's write path over sequelize: the queue every write transaction runs through, with
   * group commit (src/db/write-path.ts). SQLite takes one writer at a time.
   */
  writePath(sequelize: Sequelize, dataDir: string): WritePath;
  /** One multi-row INSERT of rows into model's table in t. */
  bulkInsert(model: ModelStatic<Model>, rows: Row[], t: Transaction): Promise<void>;
  /** One multi-row INSERT of rows in t, returning the new ids in the order of rows. */
  bulkInsertIds(model: ModelStatic<Model>, rows: Row[], t: Transaction): Promise<number[]>;
  /**
   * One multi-row INSERT of rows (values in `columns` order) into model's table in t, its values
   * bound as parameters (each stored exactly as binding it alone would store it); with onConflict,
   * existing rows get the update columns (the hot path of rig reports).
   */
  insertRows(model: ModelStatic<Model>, columns: readonly string[], rows: RawValue[][], t: Transaction, onConflict?: OnConflict): Promise<void>;
  /**
   * Two insertRows in t, `first` before `then` (whose rows may reference first's): PostgreSQL in one
   * statement (first's INSERT in a WITH), SQLite in two statements issued together.
   */
  insertRowsPair(first: RowsInsert, then: RowsInsert, t: Transaction): Promise<void>;
  /** The cheapest statement that proves the database answers. */
  ping(sequelize: Sequelize): Promise<void>;
  /** One real write in t that changes nothing (proves the database takes writes again). */
  probeWrite(sequelize: Sequelize, t: Transaction): Promise<void>;
  /**
   * The typed host fault (disk full, read-only database) a driver error stands for, or null. dataDir
   * lets an I/O error on a full disk count as disk_full.
   */
  fault(err: unknown, dataDir?: string): DomainError | null;
}

/**
 * The read-only side the CLI uses without loading Sequelize: a direct driver connection, or null
 * when the database does not exist yet or is not at the latest migration.
 */
export type OpenLiteReader = (dataDir: string, url?: string) => Promise<LiteReader | null>;
