import { openDatabase } from '../index.ts';
import { copyToPostgres, type CopyResult } from './copy.ts';
import { openTargetCaptureStore } from './target-capture-store.ts';

/**
 * `rigd db copy`: data_dir's database and capture store into the empty server database at url
 * (connected here, not migrated by the open: copyToPostgres migrates it), closed afterwards.
 */
export async function copyIntoServer(dataDir: string, url: string, onProgress?: (table: string, rows: number) => void): Promise<CopyResult> {
  const target = await openDatabase(dataDir, { url, migrate: false });
  try {
    return await copyToPostgres({ dataDir, target: target.sequelize, openCaptureStore: () => openTargetCaptureStore(url), onProgress });
  } finally {
    await target.close();
  }
}
