/**
 * Which database engine the suite runs on: SQLite by default, PostgreSQL when test/run.mjs gave the
 * file its own database (RIGD_DATABASE_URL, from RIGD_TEST_DATABASE_URL). Tests that only make sense
 * on one engine say so with sqliteOnly()/postgresOnly() and why; they are few.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Test } from 'tape';
import { dialectNameOf } from '../../src/db/dialect/index.ts';
import type { Database } from '../../src/db/index.ts';

export const DB_ENGINE = dialectNameOf(process.env.RIGD_DATABASE_URL ?? '');
export const onPostgres = DB_ENGINE === 'postgres';

/**
 * True (and a skipped assertion saying why it is not run: "ok N SQLite only: why # SKIP", counted
 * as skipped by test/run.mjs) when the suite runs on PostgreSQL: the caller returns. For what
 * exists only on SQLite (the database file, its pragmas, WAL, file modes).
 */
export function sqliteOnly(t: Test, why: string): boolean {
  if (!onPostgres) return false;
  t.skip(`SQLite only: ${why}`);
  return true;
}

/** True (and a skipped assertion saying why) when the suite runs on SQLite: the caller returns. */
export function postgresOnly(t: Test, why: string): boolean {
  if (onPostgres) return false;
  t.skip(`PostgreSQL only: ${why}`);
  return true;
}

const urls = new Map<string, string>();

/**
 * The database a test data_dir runs on: '' (SQLite in it) by default; under npm run test:pg, a
 * PostgreSQL database of its own, named after the directory (so a child process given the same
 * data_dir finds the same one), created from the template on first use. test/run.mjs drops them
 * after each file.
 */
export function databaseUrlFor(dataDir: string): string {
  const template = process.env.RIGD_TEST_DATABASE_URL;
  if (!template) return '';
  const known = urls.get(dataDir);
  if (known) return known;
  const base = new URL(template);
  const templateName = base.pathname.slice(1);
  const name = `${templateName}_d${createHash('sha1').update(path.resolve(dataDir)).digest('hex').slice(0, 16)}`;
  const admin = new URL(base);
  admin.pathname = '/postgres';
  const exists = execFileSync('psql', ['-qAtX', admin.toString(), '-c', `SELECT 1 FROM pg_database WHERE datname = '${name}'`], { encoding: 'utf8' }).trim();
  if (exists !== '1') execFileSync('psql', ['-qAtX', admin.toString(), '-c', `CREATE DATABASE "${name}" TEMPLATE "${templateName}"`], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = new URL(base);
  url.pathname = `/${name}`;
  urls.set(dataDir, url.toString());
  return url.toString();
}

/** openDatabase()'s options for a test data_dir: its own database (see databaseUrlFor). */
export function testDb(dataDir: string): { url: string } {
  return { url: databaseUrlFor(dataDir) };
}

/** [dataDir, its openDatabase() options]: openDatabase(...withDb(tmpDir())). */
export function withDb(dataDir: string): [string, { url: string }] {
  return [dataDir, testDb(dataDir)];
}

/** Runs fn on the database of a test data_dir, opened for it and closed after (src/db loaded only then). */
export async function withDatabase<T>(dataDir: string, fn: (db: Database) => Promise<T>): Promise<T> {
  const { openDatabase } = await import('../../src/db/index.ts');
  const db = await openDatabase(...withDb(dataDir));
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

/**
 * Whether rigd has created (and migrated) the database of a test data_dir: the rigd.sqlite file on
 * SQLite; on PostgreSQL, rows in that data_dir's database's schema_migrations.
 */
export function hasDatabase(dataDir: string): boolean {
  if (!onPostgres) return existsSync(path.join(dataDir, 'rigd.sqlite'));
  const sql = "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'";
  const tables = execFileSync('psql', ['-qAtX', databaseUrlFor(dataDir), '-c', sql], { encoding: 'utf8' }).trim();
  if (tables !== '1') return false;
  return Number(execFileSync('psql', ['-qAtX', databaseUrlFor(dataDir), '-c', 'SELECT count(*) FROM schema_migrations'], { encoding: 'utf8' }).trim()) > 0;
}

/** The env-file lines naming a data_dir's database and saying one node ('' on SQLite: it is in data_dir). */
export function envFileDatabaseLine(dataDir: string): string {
  const url = databaseUrlFor(dataDir);
  return url ? `RIGD_DATABASE_URL=${url}\nRIGD_CLUSTER_SINGLE_NODE=true\n` : '';
}

/**
 * For a shell command line (tmux, whose server keeps the environment of whoever started it: put
 * `-u RIGD_DATABASE_URL` before): `RIGD_DATABASE_URL='...' RIGD_CLUSTER_SINGLE_NODE=true` naming a data_dir's database, or ''.
 */
export function databaseEnvWord(dataDir: string): string {
  const url = databaseUrlFor(dataDir);
  return url ? `RIGD_DATABASE_URL='${url}' RIGD_CLUSTER_SINGLE_NODE=true` : '';
}
