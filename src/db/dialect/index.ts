/**
 * The one place the database engine is chosen: database.url empty means SQLite in data_dir,
 * postgres:// or postgresql:// means that PostgreSQL database. Both halves load lazily: the full
 * dialect loads Sequelize; the lite reader (CLI listings) must not.
 */
import { isPostgresUrl } from '../database-url.ts';
import type { Dialect, OpenLiteReader } from './contract.ts';
import type { DialectName } from './engine.ts';

export { engineOf, forEngine, type DialectName } from './engine.ts';

/** The default engine (database.url empty). */
export const DIALECT: DialectName = 'sqlite';

/**
 * database.url when the caller has no loaded config at hand (test helpers, child processes):
 * RIGD_DATABASE_URL, the same variable the config loader reads, or empty (SQLite).
 */
export function defaultDatabaseUrl(): string {
  return process.env.RIGD_DATABASE_URL ?? '';
}

/** The engine a database.url selects. */
export function dialectNameOf(url: string = defaultDatabaseUrl()): DialectName {
  return isPostgresUrl(url) ? 'postgres' : 'sqlite';
}

/** Where the database of the engine url selects lives: a file in data_dir, or a server at url. */
export function databaseHomeOf(url: string = defaultDatabaseUrl()): 'file' | 'server' {
  return dialectNameOf(url) === 'postgres' ? 'server' : 'file';
}

const engines: Record<DialectName, { dialect: () => Promise<Dialect>; liteReader: () => Promise<OpenLiteReader> }> = {
  sqlite: {
    dialect: async () => (await import('./sqlite/index.ts')).sqliteDialect,
    liteReader: async () => (await import('./sqlite/lite-reader.ts')).openLiteReader,
  },
  postgres: {
    dialect: async () => (await import('./postgres/index.ts')).postgresDialect,
    liteReader: async () => (await import('./postgres/lite-reader.ts')).openLiteReader,
  },
};

/** The dialect of the engine url selects (loads Sequelize). */
export function loadDialect(url: string = defaultDatabaseUrl()): Promise<Dialect> {
  return engines[dialectNameOf(url)].dialect();
}

/** The lite reader of the engine url selects (loads no Sequelize). */
export function liteReaderOpener(url: string = defaultDatabaseUrl()): Promise<OpenLiteReader> {
  return engines[dialectNameOf(url)].liteReader();
}

export type { ConnectOptions, Dialect, Row } from './contract.ts';
