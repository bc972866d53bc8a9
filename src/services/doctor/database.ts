import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Database } from 'sqlite3';
import { CAPTURE_STORE_FILE } from '../../db/capture-store/layout.ts';
import { DB_FILE } from '../../db/file.ts';
import { openSqliteReadOnly } from '../../db/sqlite-read-only.ts';
import { MIGRATION_NAMES } from '../../db/migrations/names.ts';
import { errorText, fail, ok, warn, type Finding } from './finding.ts';

/** The file read-only, writing nothing in data_dir (db/sqlite-read-only.ts). */
async function openReadOnly(file: string): Promise<Database> {
  return (await openSqliteReadOnly(file)).db;
}

function all<T>(db: Database, sql: string): Promise<T[]> {
  return new Promise((resolve, reject) => db.all(sql, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
}

/** The database opens, passes quick_check, and has every migration applied. Creates and changes nothing. */
export async function checkDatabase(dataDir: string): Promise<Finding[]> {
  const file = path.resolve(dataDir, DB_FILE);
  if (!existsSync(file)) {
    return [warn('database', `${file} does not exist yet`, 'rigd serve (or rigd migrate) creates it on start')];
  }
  let db: Database | undefined;
  try {
    db = await openReadOnly(file);
    const [row] = await all<{ quick_check: string }>(db, 'PRAGMA quick_check');
    if (row?.quick_check !== 'ok') {
      return [fail('database', `${file} fails quick_check: ${row?.quick_check}`, 'stop rigd and restore the last backup: rigd restore FILE')];
    }
    const tables = await all<{ name: string }>(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'");
    const done = new Set(tables.length ? (await all<{ name: string }>(db, 'SELECT name FROM schema_migrations')).map((r) => r.name) : []);
    const pending = MIGRATION_NAMES.filter((n) => !done.has(n));
    if (pending.length > 0) {
      return [warn('database', `${file} opens; ${pending.length} migration(s) pending: ${pending.join(', ')}`, 'run rigd migrate (rigd serve also applies them on start)')];
    }
    return [ok('database', `${file} opens, quick_check ok, ${MIGRATION_NAMES.length} migrations applied, none pending`)];
  } catch (err) {
    return [fail('database', `${file} cannot be used: ${errorText(err)}`, `give the rigd user read and write access to ${path.dirname(file)} and the database files in it`)];
  } finally {
    await new Promise<void>((resolve) => (db ? db.close(() => resolve()) : resolve()));
  }
}

/**
 * The capture store (capture-store.sqlite, the imported rows of captures) opens read-only and lists
 * its tables. No quick_check: the store can be far larger than the service database.
 */
export async function checkCaptureStore(dataDir: string): Promise<Finding> {
  const file = path.resolve(dataDir, CAPTURE_STORE_FILE);
  if (!existsSync(file)) return ok('capture_store', `${file} does not exist yet (the first capture import creates it)`);
  let db: Database | undefined;
  try {
    db = await openReadOnly(file);
    // The store's catalog (rigd_store_tables, rigd_capture_tables) is not a capture table.
    const [row] = await all<{ n: number }>(db, "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name NOT IN ('rigd_store_tables', 'rigd_capture_tables')");
    const mb = (statSync(file).size / 1e6).toFixed(1);
    return ok('capture_store', `${file} opens: ${row?.n ?? 0} capture tables, ${mb} MB`);
  } catch (err) {
    return fail('capture_store', `${file} cannot be used: ${errorText(err)}`, `give the rigd user read and write access to ${file}; if it is damaged, stop rigd, move it aside and re-import the captures`);
  } finally {
    await new Promise<void>((resolve) => (db ? db.close(() => resolve()) : resolve()));
  }
}
