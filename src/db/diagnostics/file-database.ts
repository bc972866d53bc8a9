/**
 * Read-only facts about the SQLite files of data_dir for `rigd doctor`: opened with
 * openSqliteReadOnly (writes nothing next to them).
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Database } from 'sqlite3';
import { CAPTURE_STORE_FILE } from '../capture-store/layout.ts';
import { DB_FILE } from '../file.ts';
import { openSqliteReadOnly } from '../sqlite-read-only.ts';

function all<T>(db: Database, sql: string): Promise<T[]> {
  return new Promise((resolve, reject) => db.all(sql, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
}

/** Opens file read-only, runs fn on it, closes it. */
async function reading<T>(file: string, fn: (db: Database) => Promise<T>): Promise<T> {
  const ro = await openSqliteReadOnly(file);
  try {
    return await fn(ro.db);
  } finally {
    await ro.close();
  }
}

/** The service database file of dataDir. */
export function databaseFile(dataDir: string): string {
  return path.resolve(dataDir, DB_FILE);
}

/** The capture store file of dataDir. */
export function captureStoreFile(dataDir: string): string {
  return path.resolve(dataDir, CAPTURE_STORE_FILE);
}

/** Whether `table` exists in the database open as db. */
export async function hasTables(db: Database, ...tables: string[]): Promise<boolean> {
  const rows = await all<{ name: string }>(db, "SELECT name FROM sqlite_master WHERE type = 'table'");
  const names = new Set(rows.map((r) => r.name));
  return tables.every((t) => names.has(t));
}

/** The service database: quick_check's first line and the migrations applied; null when the file does not exist. Throws what opening or reading it throws. */
export async function inspectDatabaseFile(dataDir: string): Promise<{ quickCheck: string | undefined; applied: Set<string> } | null> {
  const file = databaseFile(dataDir);
  if (!existsSync(file)) return null;
  return reading(file, async (db) => {
    const [row] = await all<{ quick_check: string }>(db, 'PRAGMA quick_check');
    if (row?.quick_check !== 'ok') return { quickCheck: row?.quick_check, applied: new Set() };
    const applied = (await hasTables(db, 'schema_migrations')) ? (await all<{ name: string }>(db, 'SELECT name FROM schema_migrations')).map((r) => r.name) : [];
    return { quickCheck: row.quick_check, applied: new Set(applied) };
  });
}

/** The capture store file: its capture tables (the store's catalog is none) and size; null when it does not exist. */
export async function inspectCaptureStoreFile(dataDir: string): Promise<{ tables: number; bytes: number } | null> {
  const file = captureStoreFile(dataDir);
  if (!existsSync(file)) return null;
  return reading(file, async (db) => {
    // The store's catalog (rigd_store_tables, rigd_capture_tables) is not a capture table.
    const [row] = await all<{ n: number }>(db, "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name NOT IN ('rigd_store_tables', 'rigd_capture_tables')");
    return { tables: Number(row?.n ?? 0), bytes: statSync(file).size };
  });
}

/** Runs fn on the service database file read-only; null when it does not exist. */
export async function readDatabaseFile<T>(dataDir: string, fn: (all: <R>(sql: string) => Promise<R[]>, has: (...tables: string[]) => Promise<boolean>) => Promise<T>): Promise<T | null> {
  const file = databaseFile(dataDir);
  if (!existsSync(file)) return null;
  return reading(file, (db) => fn((sql) => all(db, sql), (...tables) => hasTables(db, ...tables)));
}
