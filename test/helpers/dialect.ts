/**
 * Which database engine the suite runs on: SQLite by default, PostgreSQL when test/run.mjs gave the
 * file its own database (RIGD_DATABASE_URL, from RIGD_TEST_DATABASE_URL). Tests that only make sense
 * on one engine say so with sqliteOnly()/postgresOnly() and why; they are few.
 */
import type { Test } from 'tape';
import { dialectNameOf } from '../../src/db/dialect/index.ts';

export const DB_ENGINE = dialectNameOf(process.env.RIGD_DATABASE_URL ?? '');
export const onPostgres = DB_ENGINE === 'postgres';

/**
 * True (and a passing assertion saying why it is not run) when the suite runs on PostgreSQL: the
 * caller returns. For what exists only on SQLite (the database file, its pragmas, WAL, file modes).
 */
export function sqliteOnly(t: Test, why: string): boolean {
  if (!onPostgres) return false;
  t.pass(`SQLite only: ${why}`);
  return true;
}

/** True (and a passing assertion saying why) when the suite runs on SQLite: the caller returns. */
export function postgresOnly(t: Test, why: string): boolean {
  if (onPostgres) return false;
  t.pass(`PostgreSQL only: ${why}`);
  return true;
}
