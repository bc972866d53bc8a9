/**
 * Online backup and restore of the SQLite database file.
 *
 * Backup uses `VACUUM INTO`: one statement in one read transaction, so under WAL it copies a
 * consistent snapshot while `rigd serve` keeps committing (writers are never blocked, and unlike
 * sqlite3's step-wise backup API it never restarts when another connection writes). The copy is
 * compact, written to a temp name, checked with integrity_check, fsynced and only then renamed into
 * place. The copy holds password hashes and session tokens: the temp file and the backup are 0600 from
 * the moment they exist. (PostgreSQL installs use pg_dump instead; this file is the SQLite path.)
 */
import { randomBytes } from 'node:crypto';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import sqlite3 from 'sqlite3';
import { migrations } from './migrations/index.ts';
import { loadDialect } from './dialect/index.ts';
import { DB_FILE } from './file.ts';
import { removeOnInterrupt } from '../temp-files.ts';
import { fsyncPath, writeCheckedCopy, type CopyResult } from './vacuum-copy.ts';

export type BackupResult = CopyResult;

function all<T>(db: sqlite3.Database, sql: string): Promise<T[]> {
  return new Promise((resolve, reject) => db.all(sql, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
}

function openReadOnly(file: string): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, sqlite3.OPEN_READONLY, (err) => (err ? reject(err) : resolve(db)));
  });
}

function close(db: sqlite3.Database): Promise<void> {
  return new Promise((resolve) => db.close(() => resolve()));
}

/**
 * Checks that `file` is a sound rigd database this version can run: integrity_check passes and every
 * applied migration is one this build knows. Returns the names of the applied migrations.
 */
export async function verifyDatabaseFile(file: string): Promise<string[]> {
  const db = await openReadOnly(file);
  try {
    const check = await all<{ integrity_check: string }>(db, 'PRAGMA integrity_check');
    const verdict = check.map((r) => r.integrity_check).join('; ');
    if (verdict !== 'ok') throw new Error(`${file} fails integrity_check: ${verdict.slice(0, 300)}`);
    const tables = await all<{ name: string }>(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'");
    if (tables.length === 0) throw new Error(`${file} is not a rigd database (no schema_migrations table)`);
    const applied = (await all<{ name: string }>(db, 'SELECT name FROM schema_migrations')).map((r) => r.name);
    const known = new Set(migrations.map((m) => m.name));
    const unknown = applied.filter((n) => !known.has(n));
    if (unknown.length) throw new Error(`${file} comes from a newer rigd (migrations ${unknown.join(', ')}): upgrade rigd first`);
    return applied;
  } catch (err) {
    if ((err as { code?: string }).code === 'SQLITE_NOTADB') throw new Error(`${file} is not an SQLite database`);
    throw err;
  } finally {
    await close(db);
  }
}

/** Writes a consistent copy of the database in dataDir to `target` (which must not exist). */
export async function backupDatabase(dataDir: string, target: string): Promise<BackupResult> {
  return writeCheckedCopy(
    target,
    async (tmp) => {
      const dialect = await loadDialect();
      const sequelize = dialect.connect(dataDir);
      try {
        await sequelize.query('VACUUM INTO ?', { replacements: [tmp] });
      } finally {
        await dialect.close(sequelize);
      }
    },
    async (tmp) => {
      await verifyDatabaseFile(tmp);
    },
  );
}

export interface RestoreResult {
  /** Where the database that was replaced now is, or null when there was none. */
  previous: string | null;
  migrations: string[];
}

/**
 * Replaces the database in dataDir with `source` after verifying it. The caller makes sure no server
 * runs on dataDir. The backup is copied next to the database first (interrupted there, the database
 * is untouched); then the old database is checkpointed (its WAL folded in) and kept aside, renamed,
 * and the copy renamed into its place.
 */
export async function restoreDatabase(dataDir: string, source: string, now = new Date()): Promise<RestoreResult> {
  const src = path.resolve(source);
  const applied = await verifyDatabaseFile(src);
  const live = path.resolve(dataDir, DB_FILE);
  const tmp = `${live}.restore-${randomBytes(4).toString('hex')}.tmp`;
  const done = removeOnInterrupt(tmp);
  let previous: string | null = null;
  try {
    await copyFile(src, tmp);
    fsyncPath(tmp);
    if (existsSync(live)) {
      const dialect = await loadDialect();
      const sequelize = dialect.connect(dataDir);
      try {
        await sequelize.query('PRAGMA wal_checkpoint(TRUNCATE)');
      } finally {
        await dialect.close(sequelize);
      }
      previous = `${live}.before-restore-${now.toISOString().replace(/[:.]/g, '-')}`;
      renameSync(live, previous);
      for (const suffix of ['-wal', '-shm']) rmSync(`${live}${suffix}`, { force: true });
    }
    renameSync(tmp, live);
    fsyncPath(path.dirname(live));
  } catch (err) {
    rmSync(tmp, { force: true });
    if (previous && !existsSync(live)) renameSync(previous, live);
    throw err;
  } finally {
    done();
  }
  return { previous, migrations: applied };
}
