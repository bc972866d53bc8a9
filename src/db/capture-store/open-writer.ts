/** The capture store's writer for a configuration: PostgreSQL's schema when database.url names one, else data_dir's file. */
import { isPostgresUrl } from '../database-url.ts';
import { openPgCaptureStore } from './postgres-writer.ts';
import { openCaptureStore } from './sqlite-writer.ts';
import type { CaptureStoreWriter } from './writer.ts';

export function openStoreWriter(dataDir: string, url?: string): Promise<CaptureStoreWriter> {
  return isPostgresUrl(url) ? openPgCaptureStore(url) : openCaptureStore(dataDir);
}
