// Helpers for capture ingestion tests: put a local file into the app's storage, wait for a capture.
import { createReadStream, statSync } from 'node:fs';
import type { App } from '../../src/services/app.ts';
import type { CaptureView } from '../../src/services/captures.ts';
import type { ObjectInfo } from '../../src/storage/contract.ts';
import { waitFor } from './queue.ts';

/** Stores `file` as `key` in the embedded store of `app`. */
export async function putFile(app: App, key: string, file: string): Promise<ObjectInfo> {
  const storage = app.storage;
  if (storage.driver !== 'embedded') throw new Error('putFile needs the embedded store');
  return storage.putObject(key, createReadStream(file), { expectedSize: statSync(file).size });
}

/** Waits until capture `id` is ingested or failed. */
export function settled(app: App, id: number, timeoutMs = 30_000): Promise<CaptureView> {
  return waitFor(
    async () => {
      const c = await app.captures.get(id);
      return c.state === 'ingested' || c.state === 'failed' ? c : null;
    },
    timeoutMs,
    `capture ${id} to settle`,
    50,
  );
}
