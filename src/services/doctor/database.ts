import path from 'node:path';
import { captureStoreFile, databaseFile, inspectCaptureStoreFile, inspectDatabaseFile } from '../../db/diagnostics/file-database.ts';
import { MIGRATION_NAMES } from '../../db/migrations/names.ts';
import { errorText, fail, ok, warn, type Finding } from './finding.ts';

/** The database opens, passes quick_check, and has every migration applied. Creates and changes nothing. */
export async function checkDatabase(dataDir: string): Promise<Finding[]> {
  const file = databaseFile(dataDir);
  try {
    const facts = await inspectDatabaseFile(dataDir);
    if (facts === null) return [warn('database', `${file} does not exist yet`, 'rigd serve (or rigd migrate) creates it on start')];
    if (facts.quickCheck !== 'ok') {
      return [fail('database', `${file} fails quick_check: ${facts.quickCheck}`, 'stop rigd and restore the last backup: rigd restore FILE')];
    }
    const done = facts.applied;
    const pending = MIGRATION_NAMES.filter((n) => !done.has(n));
    if (pending.length > 0) {
      return [warn('database', `${file} opens; ${pending.length} migration(s) pending: ${pending.join(', ')}`, 'run rigd migrate (rigd serve also applies them on start)')];
    }
    return [ok('database', `${file} opens, quick_check ok, ${MIGRATION_NAMES.length} migrations applied, none pending`)];
  } catch (err) {
    return [fail('database', `${file} cannot be used: ${errorText(err)}`, `give the rigd user read and write access to ${path.dirname(file)} and the database files in it`)];
  }
}

/**
 * The capture store (capture-store.sqlite, the imported rows of captures) opens read-only and lists
 * its tables. No quick_check: the store can be far larger than the service database.
 */
export async function checkCaptureStore(dataDir: string): Promise<Finding> {
  const file = captureStoreFile(dataDir);
  try {
    const facts = await inspectCaptureStoreFile(dataDir);
    if (facts === null) return ok('capture_store', `${file} does not exist yet (the first capture import creates it)`);
    const mb = (facts.bytes / 1e6).toFixed(1);
    return ok('capture_store', `${file} opens: ${facts.tables} capture tables, ${mb} MB`);
  } catch (err) {
    return fail('capture_store', `${file} cannot be used: ${errorText(err)}`, `give the rigd user read and write access to ${file}; if it is damaged, stop rigd, move it aside and re-import the captures`);
  }
}
