import path from 'node:path';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { Reader } from './reader.ts';
import { initModels, type Models } from './models/index.ts';
import { migrate } from './migrate.ts';
import { databaseOpenError } from './open-error.ts';
import { defaultDatabaseUrl, forEngine, loadDialect, type ConnectOptions, type Dialect } from './dialect/index.ts';
import { redactText } from './database-url.ts';
import { postgresOpenError } from './dialect/postgres/open-error.ts';
import { DB_FILE } from './file.ts';
import type { WritePath } from './write-path.ts';

export interface Database {
  /** The models' instance, for the db layer; services call the domain functions instead. */
  sequelize: Sequelize;
  /** What depends on the engine (src/db/dialect/): used by src/db's own domain functions. */
  dialect: Dialect;
  models: Models;
  /** The one writer: every write transaction goes through it. */
  writes: WritePath;
  /** Plain SQL reads on the read connection (the same queries the CLI runs without Sequelize). */
  reader: Reader;
  /** Resolves when the database answers a statement. */
  ping(): Promise<void>;
  /** One real write through the write path that changes nothing: rejects while writes fail. */
  probeWrite(): Promise<void>;
  /** Waits for queued writes, then closes the connections. */
  close(): Promise<void>;
}

export interface OpenOptions extends ConnectOptions {
  /** Apply pending migrations first. @default true */
  migrate?: boolean;
}

/**
 * Opens the database in dataDir, creating and migrating it when needed. A file that cannot be
 * opened (a directory, no permission, not a database) throws CannotStart naming it; nothing stays open.
 */
export async function openDatabase(dataDir: string, opts: OpenOptions = {}): Promise<Database> {
  const url = opts.url ?? defaultDatabaseUrl();
  const dialect = await loadDialect(url);
  let sequelize: Sequelize | undefined;
  try {
    sequelize = dialect.connect(dataDir, { ...opts, url });
    // The first connection (and its pragmas) opens the file: fail here, before any migration.
    await sequelize.authenticate();
    if (opts.migrate !== false) await migrate(sequelize, dataDir);
  } catch (err) {
    if (sequelize) await dialect.close(sequelize).catch(() => undefined);
    throw forEngine(dialect.name, {
      postgres: () => postgresOpenError(url, err) ?? redactError(err, url),
      sqlite: () => databaseOpenError(path.join(dataDir, DB_FILE), err) ?? err,
    })();
  }
  const models = initModels(sequelize);
  const writes = dialect.writePath(sequelize, dataDir);
  let closed = false;
  const reader: Reader = {
    engine: dialect.name,
    all: <T>(sql: string, params: unknown[] = []) =>
      sequelize.query(sql, { replacements: params, type: QueryTypes.SELECT }) as Promise<T[]>,
  };
  return {
    sequelize,
    dialect,
    models,
    writes,
    reader,
    ping: () => dialect.ping(sequelize),
    probeWrite: () => writes.run((t) => dialect.probeWrite(sequelize, t)),
    async close() {
      if (closed) return;
      closed = true;
      await writes.drain();
      await dialect.close(sequelize);
    },
  };
}

/**
 * Whether db is a server several rigd nodes may share (PostgreSQL) rather than a file of this
 * host: what services ask instead of naming an engine.
 */
export function sharedByNodes(db: Pick<Database, 'dialect'>): boolean {
  return db.dialect.sharedByNodes;
}

/** err with any password of url taken out of its message (a driver may quote its connection string). */
function redactError(err: unknown, url: string): unknown {
  if (err instanceof Error) {
    err.message = redactText(err.message, ...secretsOf(url));
    if (err.stack) err.stack = redactText(err.stack, ...secretsOf(url));
  }
  return err;
}

function secretsOf(url: string): string[] {
  try {
    const p = new URL(url).password;
    return p ? [p, decodeURIComponent(p)] : [];
  } catch {
    return [];
  }
}

export type { Models } from './models/index.ts';
export { WritePath, type WriteHealth } from './write-path.ts';
export { Batcher } from './batcher.ts';
export type { Reader } from './reader.ts';
export type { Dialect } from './dialect/index.ts';
/** A write transaction of the write path, as services pass it on to src/db functions. */
export type { Transaction } from 'sequelize';
