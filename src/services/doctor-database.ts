import { existsSync } from 'node:fs';
import path from 'node:path';
import { QueryTypes } from 'sequelize';
import { pendingMigrations } from '../db/migrate.ts';
import { migrations } from '../db/migrations/index.ts';
import { closeSequelize, createSequelize, DB_FILE } from '../db/sequelize.ts';
import { errorText, fail, ok, warn, type Finding } from './doctor-finding.ts';

/** The database opens, passes quick_check, and has every migration applied. Creates nothing. */
export async function checkDatabase(dataDir: string): Promise<Finding[]> {
  const file = path.resolve(dataDir, DB_FILE);
  if (!existsSync(file)) {
    return [warn('database', `${file} does not exist yet`, 'rigd serve (or rigd migrate) creates it on start')];
  }
  const sequelize = createSequelize(dataDir);
  try {
    const [row] = await sequelize.query<{ quick_check: string }>('PRAGMA quick_check', { type: QueryTypes.SELECT });
    if (row?.quick_check !== 'ok') {
      return [fail('database', `${file} fails quick_check: ${row?.quick_check}`, 'stop rigd and restore the last backup: rigd restore FILE')];
    }
    const pending = await pendingMigrations(sequelize);
    if (pending.length > 0) {
      return [warn('database', `${file} opens; ${pending.length} migration(s) pending: ${pending.join(', ')}`, 'run rigd migrate (rigd serve also applies them on start)')];
    }
    return [ok('database', `${file} opens, quick_check ok, ${migrations.length} migrations applied, none pending`)];
  } catch (err) {
    return [fail('database', `${file} cannot be used: ${errorText(err)}`, `give the rigd user read and write access to ${path.dirname(file)} and the database files in it`)];
  } finally {
    await closeSequelize(sequelize);
  }
}
