import { existsSync } from 'node:fs';
import path from 'node:path';
import { DB_FILE } from '../../file.ts';
import { MIGRATION_NAMES } from '../../migrations/names.ts';
import { databaseOpenError } from '../../open-error.ts';
import type { LiteReader } from '../../reader.ts';

/**
 * A direct sqlite3 connection to data_dir's database for reading, or null when the database does
 * not exist yet or is not at the latest migration (then the caller opens it fully, which creates
 * and migrates it). Opened read-write without create, so it reads a WAL database whether or not
 * `rigd serve` is running; it never writes. Loads no Sequelize.
 */
export async function openLiteReader(dataDir: string): Promise<LiteReader | null> {
  const file = path.join(dataDir, DB_FILE);
  if (!existsSync(file)) return null;
  const { default: sqlite3 } = await import('sqlite3');
  const db = await new Promise<import('sqlite3').Database>((resolve, reject) => {
    const conn = new sqlite3.Database(file, sqlite3.OPEN_READWRITE, (err) => (err ? reject(databaseOpenError(file, err) ?? err) : resolve(conn)));
  });
  db.configure('busyTimeout', 10_000);
  const reader: LiteReader = {
    all: <T>(sql: string, params: unknown[] = []) =>
      new Promise<T[]>((resolve, reject) => db.all(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as T[])))),
    close: () => new Promise<void>((resolve) => db.close(() => resolve())),
  };
  try {
    const applied = await reader.all<{ name: string }>('SELECT name FROM schema_migrations');
    const done = new Set(applied.map((r) => r.name));
    if (MIGRATION_NAMES.every((n) => done.has(n))) return reader;
  } catch {
    // No migrations table yet: a database that was never migrated.
  }
  await reader.close();
  return null;
}
