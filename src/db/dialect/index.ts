/**
 * The one place the database engine is chosen. Both halves load lazily: the full dialect loads
 * Sequelize; the lite reader (CLI listings) must not.
 */
import type { Dialect, OpenLiteReader } from './contract.ts';

/** The engine rigd runs on. */
export const DIALECT = 'sqlite';

const engines: Record<typeof DIALECT, { dialect: () => Promise<Dialect>; liteReader: () => Promise<OpenLiteReader> }> = {
  sqlite: {
    dialect: async () => (await import('./sqlite/index.ts')).sqliteDialect,
    liteReader: async () => (await import('./sqlite/lite-reader.ts')).openLiteReader,
  },
};

/** The dialect of the chosen engine (loads Sequelize). */
export function loadDialect(): Promise<Dialect> {
  return engines[DIALECT].dialect();
}

/** The chosen engine's lite reader (loads no Sequelize). */
export function liteReaderOpener(): Promise<OpenLiteReader> {
  return engines[DIALECT].liteReader();
}

export type { ConnectOptions, Dialect, Row } from './contract.ts';
