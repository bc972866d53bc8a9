import { closeSync, openSync } from 'node:fs';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import type { QueryInterface, Sequelize } from 'sequelize';
import { SequelizeStorage, Umzug } from 'umzug';
import { migrations } from './migrations/index.ts';

function umzugFor(sequelize: Sequelize): Umzug<QueryInterface> {
  return new Umzug({
    migrations,
    context: sequelize.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize, tableName: 'schema_migrations' }),
    logger: undefined,
  });
}

export interface MigrationStatus {
  executed: string[];
  pending: string[];
}

export async function migrationStatus(sequelize: Sequelize): Promise<MigrationStatus> {
  const umzug = umzugFor(sequelize);
  const [executed, pending] = await Promise.all([umzug.executed(), umzug.pending()]);
  return { executed: executed.map((m) => m.name), pending: pending.map((m) => m.name) };
}

/**
 * Applies pending migrations. The server and CLI commands may start at the same moment on a
 * fresh data_dir, so the run holds a lock file in dataDir (stale after 10 s if its holder died).
 * Returns the names applied by this call.
 */
export async function migrate(sequelize: Sequelize, dataDir: string): Promise<string[]> {
  const umzug = umzugFor(sequelize);
  if ((await umzug.pending()).length === 0) return [];
  const target = path.join(dataDir, '.migrate');
  closeSync(openSync(target, 'a'));
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
