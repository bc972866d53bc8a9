import { defaultDatabaseUrl, forEngine, loadDialect } from './dialect/index.ts';
import { postgresOpenError } from './dialect/postgres/open-error.ts';
import { migrate, migrationStatus } from './migrate.ts';

export interface UpgradeResult {
  /** Migrations applied by this call. */
  applied: string[];
  executed: string[];
  pending: string[];
}

/** `rigd migrate`: applies pending migrations to the database (data_dir's SQLite file, creating it, or database.url's server) and says where it stands. */
export async function upgradeDatabase(dataDir: string, url: string = defaultDatabaseUrl()): Promise<UpgradeResult> {
  const dialect = await loadDialect(url);
  const sequelize = dialect.connect(dataDir, { url });
  try {
    const applied = await migrate(sequelize, dataDir);
    const status = await migrationStatus(sequelize);
    return { applied, executed: status.executed, pending: status.pending };
  } catch (err) {
    // PostgreSQL: a server that cannot be reached is one line naming it, its password masked.
    throw forEngine(dialect.name, { postgres: () => postgresOpenError(url, err), sqlite: () => null })() ?? err;
  } finally {
    await dialect.close(sequelize);
  }
}
