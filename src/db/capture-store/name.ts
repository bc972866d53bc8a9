import { isPostgresUrl, redactText } from '../database-url.ts';
import { captureStorePath } from './layout.ts';
import { CAPTURE_STORE_SCHEMA } from './postgres-schema.ts';

/** Where the capture store of this database is, for messages (never the database password). */
export function captureStoreName(dataDir: string, url: string): string {
  return isPostgresUrl(url) ? `${redactText(url)}#${CAPTURE_STORE_SCHEMA}` : captureStorePath(dataDir);
}
