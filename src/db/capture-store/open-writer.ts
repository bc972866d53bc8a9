/** The capture store's writer for a configuration: PostgreSQL's schema when database.url names one, else data_dir's file. */
import { isPostgresUrl } from '../database-url.ts';
import { openPgCaptureStore } from './postgres-writer.ts';
import { openCaptureStore } from './sqlite-writer.ts';
import type { StoreBounds } from './placement.ts';
import type { CaptureStoreWriter } from './writer.ts';

export function openStoreWriter(dataDir: string, url?: string, bounds?: StoreBounds): Promise<CaptureStoreWriter> {
  return isPostgresUrl(url) ? openPgCaptureStore(url, undefined, bounds) : openCaptureStore(dataDir, bounds);
}
