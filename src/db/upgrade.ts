import { loadDialect } from './dialect/index.ts';
import { migrate, migrationStatus } from './migrate.ts';

export interface UpgradeResult {
  /** Migrations applied by this call. */
  applied: string[];
  executed: string[];
  pending: string[];
}

/** `rigd migrate`: applies pending migrations to data_dir's database (creating it) and says where it stands. */
export async function upgradeDatabase(dataDir: string): Promise<UpgradeResult> {
  const dialect = await loadDialect();
  const sequelize = dialect.connect(dataDir);
  try {
    const applied = await migrate(sequelize, dataDir);
    const status = await migrationStatus(sequelize);
    return { applied, executed: status.executed, pending: status.pending };
  } finally {
    await dialect.close(sequelize);
  }
}
