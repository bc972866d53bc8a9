import { QueryTypes, type Sequelize } from 'sequelize';
import type { Reader } from './reader.ts';
import { initModels, type Models } from './models/index.ts';
import { migrate } from './migrate.ts';
import { closeSequelize, createSequelize, type SequelizeOptions } from './sequelize.ts';
import { WritePath } from './write-path.ts';

export interface Database {
  sequelize: Sequelize;
  models: Models;
  /** The one writer: every write transaction goes through it. */
  writes: WritePath;
  /** Plain SQL reads on the read connection (the same queries the CLI runs without Sequelize). */
  reader: Reader;
  /** Waits for queued writes, then closes the connections. */
  close(): Promise<void>;
}

export interface OpenOptions extends SequelizeOptions {
  /** Apply pending migrations first. @default true */
  migrate?: boolean;
}

/** Opens the database in dataDir, creating and migrating it when needed. */
export async function openDatabase(dataDir: string, opts: OpenOptions = {}): Promise<Database> {
  const sequelize = createSequelize(dataDir, opts);
  if (opts.migrate !== false) await migrate(sequelize, dataDir);
  const models = initModels(sequelize);
  const writes = new WritePath(sequelize, dataDir);
  let closed = false;
  const reader: Reader = {
    all: <T>(sql: string, params: unknown[] = []) =>
      sequelize.query(sql, { replacements: params, type: QueryTypes.SELECT }) as Promise<T[]>,
  };
  return {
    sequelize,
    models,
    writes,
    reader,
    async close() {
      if (closed) return;
      closed = true;
      await writes.drain();
      await closeSequelize(sequelize);
    },
  };
}

export type { Models } from './models/index.ts';
export { WritePath, Batcher, type WriteHealth } from './write-path.ts';
export type { Reader } from './reader.ts';
