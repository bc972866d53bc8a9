/**
 * Where `rigd db copy` opens the target's capture store: the one place the PostgreSQL store writer
 * is to be opened. No PostgreSQL CaptureStoreWriter exists in src/db/capture-store yet, so this
 * refuses; the copy calls it only when the source store holds rows (and before anything is
 * written), so an install with an empty store moves over today.
 */
import { DomainError } from '../../errors.ts';
import type { CaptureStoreWriter } from '../capture-store/writer.ts';

export class CaptureStoreCopyUnsupported extends DomainError {
  constructor(message: string) {
    super('unprocessable', 'capture_store_copy_unsupported', message);
  }
}

/** A writer on the capture store of the PostgreSQL database at url. */
export async function openTargetCaptureStore(_url: string): Promise<CaptureStoreWriter> {
  throw new CaptureStoreCopyUnsupported(
    'copying the capture store to PostgreSQL is not yet supported by this rigd (the capture store has rows): nothing was written',
  );
}
