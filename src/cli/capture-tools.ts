import type { Command } from 'commander';
import { openDatabase, type Database } from '../db/index.ts';
import { quietLogger } from '../log/quiet.ts';
import { CaptureService } from '../services/captures/service.ts';
import { createStorage } from '../storage/index.ts';
import { configFor } from './context.ts';

/** What `rigd ingest` works with: the database and the capture service, nothing else of the app. */
export interface CaptureTools {
  db: Database;
  captures: CaptureService;
  /** The config's data_dir (where the SQLite database is). */
  dataDir: string;
}

/**
 * Opens only the database (created and migrated like openApp does), the storage driver and the
 * capture service for one command, and always closes them: none of the app's other services (and
 * their modules: notifications, alerts, the ingest worker and its stores) is loaded (start-up time
 * of `rigd ingest --wait`). Built into the ingest command's bundle (scripts/bundle.mjs).
 */
export async function withCaptures<T>(cmd: Command, fn: (tools: CaptureTools) => Promise<T>): Promise<T> {
  const config = await configFor(cmd);
  const db = await openDatabase(config.data_dir, { url: config.database.url, postgres: config.database });
  try {
    const captures = new CaptureService(db, createStorage(config), config, quietLogger);
    return await fn({ db, captures, dataDir: config.data_dir });
  } finally {
    await db.close();
  }
}
