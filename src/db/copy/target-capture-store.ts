/**
 * Where `rigd db copy` opens the target's capture store: the PostgreSQL store writer on the target
 * database (schema rigd_captures, created on open). The copy calls it only when the source store holds rows.
 */
import { openPgCaptureStore } from '../capture-store/postgres-writer.ts';
import type { CaptureStoreWriter } from '../capture-store/writer.ts';

/** A writer on the capture store of the PostgreSQL database at url. */
export function openTargetCaptureStore(url: string): Promise<CaptureStoreWriter> {
  return openPgCaptureStore(url);
}
