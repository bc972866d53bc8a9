import { closeSync, openSync } from 'node:fs';
import path from 'node:path';
import { QueryTypes, type QueryInterface, type Sequelize } from 'sequelize';
import type { Umzug } from 'umzug';
import { CannotStart } from '../errors.ts';
import { migrations } from './migrations/index.ts';

/** The table umzug records applied migrations in. */
export const MIGRATIONS_TABLE = 'schema_migrations';

/** umzug (and its command-line stack) loads only when a migration has to run or be listed. */
async function umzugFor(sequelize: Sequelize): Promise<Umzug<QueryInterface>> {
  const { SequelizeStorage, Umzug } = await import('umzug');
  return new Umzug({
    migrations,
    context: sequelize.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize, tableName: MIGRATIONS_TABLE }),
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
export async function pendingMigrations(sequelize: Sequelize): Promise<string[]> {
  const tables = (await sequelize.getQueryInterface().showAllTables()) as unknown[];
  const names = tables.map((t) => (typeof t === 'string' ? t : String((t as { tableName?: string }).tableName)));
  if (!names.includes(MIGRATIONS_TABLE)) return migrations.map((m) => m.name);
  const rows = await sequelize.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE}`, { type: QueryTypes.SELECT });
  const known = new Set(migrations.map((m) => m.name));
  const unknown = rows.map((r) => r.name).filter((n) => !known.has(n));
  if (unknown.length) {
    throw new CannotStart(
      `the database was migrated by a newer rigd (migration ${unknown.join(', ')}): install that rigd again, or restore a backup made by this version (rigd restore)`,
      'newer_database',
    );
  }
  const done = new Set(rows.map((r) => r.name));
  return migrations.map((m) => m.name).filter((n) => !done.has(n));
}

export async function migrationStatus(sequelize: Sequelize): Promise<MigrationStatus> {
  const umzug = await umzugFor(sequelize);
  const [executed, pending] = await Promise.all([umzug.executed(), umzug.pending()]);
  return { executed: executed.map((m) => m.name), pending: pending.map((m) => m.name) };
}

/**
 * Applies pending migrations. The server and CLI commands may start at the same moment on a
 * fresh data_dir, so the run holds a lock file in dataDir (stale after 10 s if its holder died);
 * on PostgreSQL, an advisory lock of the server.
 * Returns the names applied by this call.
 */
export async function migrate(sequelize: Sequelize, dataDir: string): Promise<string[]> {
  if ((await pendingMigrations(sequelize)).length === 0) return [];
  if (sequelize.getDialect() === 'postgres') {
    // PostgreSQL: the lock is the server's (processes on other hosts share it), taken before umzug
    // creates its table, which two processes could otherwise both try at once.
    const { withAdvisoryLock, MIGRATION_LOCK_KEY } = await import('./dialect/postgres/advisory-lock.ts');
    return withAdvisoryLock(sequelize, MIGRATION_LOCK_KEY, async () => {
      const umzug = await umzugFor(sequelize);
      const applied = await umzug.up();
      return applied.map((m) => m.name);
    });
  }
  const umzug = await umzugFor(sequelize);
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
