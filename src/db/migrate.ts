import { closeSync, openSync } from 'node:fs';
import path from 'node:path';
import { QueryTypes, type QueryInterface, type Sequelize } from 'sequelize';
import type { Umzug } from 'umzug';
import { CannotStart } from '../errors.ts';
import { migrations } from './migrations/index.ts';
import type { Migration } from './migrations/types.ts';
import { engineOf, forEngine } from './dialect/engine.ts';

/** The table umzug records applied migrations in. */
export const MIGRATIONS_TABLE = 'schema_migrations';

/** umzug (and its command-line stack) loads only when a migration has to run or be listed. */
async function umzugFor(sequelize: Sequelize, list: Migration[] = migrations): Promise<Umzug<QueryInterface>> {
  const { SequelizeStorage, Umzug } = await import('umzug');
  const storage = new SequelizeStorage({ sequelize, tableName: MIGRATIONS_TABLE });
  if (!forEngine(engineOf(sequelize), { postgres: true, sqlite: false })) {
    return new Umzug({ migrations: list, context: sequelize.getQueryInterface(), storage, logger: undefined });
  }
  // PostgreSQL: each migration and the row recording it commit together (inOwnTransactions).
  const { inOwnTransactions } = await import('./dialect/postgres/migration-tx.ts');
  return new Umzug({
    migrations: inOwnTransactions(sequelize, list, MIGRATIONS_TABLE),
    context: sequelize.getQueryInterface(),
    storage: { executed: () => storage.executed(), logMigration: async () => undefined, unlogMigration: (p) => storage.unlogMigration(p) },
    logger: undefined,
  });
}

export interface MigrationStatus {
  executed: string[];
  pending: string[];
}

/**
 * Names of the known migrations not yet applied, read straight from umzug's table (one indexed read,
 * no umzug). Works on SQLite and PostgreSQL: a missing table means nothing has been applied.
 * A database that a newer rigd has migrated (a migration this rigd does not know, as after a rollback
 * of the package) is refused: this rigd would run on a schema it was not written for.
 */
export async function pendingMigrations(sequelize: Sequelize, list: Migration[] = migrations): Promise<string[]> {
  const tables = (await sequelize.getQueryInterface().showAllTables()) as unknown[];
  const names = tables.map((t) => (typeof t === 'string' ? t : String((t as { tableName?: string }).tableName)));
  if (!names.includes(MIGRATIONS_TABLE)) return list.map((m) => m.name);
  const rows = await sequelize.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE}`, { type: QueryTypes.SELECT });
  const known = new Set(list.map((m) => m.name));
  const unknown = rows.map((r) => r.name).filter((n) => !known.has(n));
  if (unknown.length) {
    throw new CannotStart(
      `the database was migrated by a newer rigd (migration ${unknown.join(', ')}): install that rigd again, or restore a backup made by this version (rigd restore)`,
      'newer_database',
    );
  }
  const done = new Set(rows.map((r) => r.name));
  return list.map((m) => m.name).filter((n) => !done.has(n));
}

export async function migrationStatus(sequelize: Sequelize): Promise<MigrationStatus> {
  const umzug = await umzugFor(sequelize);
  const [executed, pending] = await Promise.all([umzug.executed(), umzug.pending()]);
  return { executed: executed.map((m) => m.name), pending: pending.map((m) => m.name) };
}

/**
 * Applies pending migrations (`list`: every known one; tests pass their own). The server and CLI
 * commands may start at the same moment on a fresh data_dir, so the run holds a lock file in dataDir
 * (stale after 10 s if its holder died); on PostgreSQL, an advisory lock of the server, and each
 * migration runs in a transaction of its own with the row recording it. On SQLite migrations run
 * outside a transaction (Sequelize's table rebuilds toggle PRAGMA foreign_keys, which a transaction
 * ignores): one that fails halfway is not recorded, and what it did before failing stays.
 * Returns the names applied by this call.
 */
export async function migrate(sequelize: Sequelize, dataDir: string, list: Migration[] = migrations): Promise<string[]> {
  if ((await pendingMigrations(sequelize, list)).length === 0) return [];
  if (forEngine(engineOf(sequelize), { postgres: true, sqlite: false })) {
    // PostgreSQL: the lock is the server's (processes on other hosts share it), taken before umzug
    // creates its table, which two processes could otherwise both try at once.
    const { withAdvisoryLock, MIGRATION_LOCK_KEY } = await import('./dialect/postgres/advisory-lock.ts');
    return withAdvisoryLock(sequelize, MIGRATION_LOCK_KEY, async () => {
      const umzug = await umzugFor(sequelize, list);
      const applied = await umzug.up();
      return applied.map((m) => m.name);
    });
  }
  const umzug = await umzugFor(sequelize, list);
  if ((await umzug.pending()).length === 0) return [];
  const target = path.join(dataDir, '.migrate');
  closeSync(openSync(target, 'a'));
  const { default: lockfile } = await import('proper-lockfile');
  const release = await lockfile.lock(target, {
    stale: 10_000,
    retries: { retries: 100, minTimeout: 50, maxTimeout: 250 },
  });
  try {
    const applied = await umzug.up();
    return applied.map((m) => m.name);
  } finally {
    await release();
  }
}
