// History rows in a rigd database, counted over a connection of the bench's own (rigd runs in
// another process): data_dir's SQLite file, or the PostgreSQL database of database.url.
import path from 'node:path';
import pg from 'pg';
import sqlite3 from 'sqlite3';
import { DB_FILE } from '../../src/db/file.ts';

export async function countReports(dataDir: string, databaseUrl?: string): Promise<number> {
  if (databaseUrl) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      return Number((await client.query('SELECT count(*) AS n FROM rig_reports')).rows[0].n);
    } finally {
      await client.end();
    }
  }
  const db = new sqlite3.Database(path.join(dataDir, DB_FILE), sqlite3.OPEN_READONLY);
  try {
    return await new Promise<number>((resolve, reject) => db.get('SELECT count(*) AS n FROM rig_reports', (err, row: { n: number }) => (err ? reject(err) : resolve(row.n))));
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
}

/**
 * The count once it holds still (two reads 500 ms apart agree): after a timed load run, requests
 * still in flight when the client stopped are committed (and counted) afterwards.
 */
export async function settledCount(dataDir: string, databaseUrl?: string): Promise<number> {
  let last = await countReports(dataDir, databaseUrl);
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    const now = await countReports(dataDir, databaseUrl);
    if (now === last) return now;
    last = now;
  }
}
