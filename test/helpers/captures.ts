// Helpers for capture ingestion tests: put a local file into the app's storage, wait for a capture.
import { createReadStream, statSync } from 'node:fs';
import type { App } from '../../src/services/app.ts';
import type { CaptureView } from '../../src/services/captures/service.ts';
import type { ObjectInfo } from '../../src/storage/contract.ts';
import { WAIT_MS, waitFor } from './jobs.ts';

/** Stores `file` as `key` in the embedded store of `app`. */
export async function putFile(app: App, key: string, file: string): Promise<ObjectInfo> {
  const storage = app.storage;
  if (storage.driver !== 'embedded') throw new Error('putFile needs the embedded store');
  return storage.putObject(key, createReadStream(file), { expectedSize: statSync(file).size });
}

/** Waits until capture `id` is ingested or failed. */
export function settled(app: App, id: number, timeoutMs = WAIT_MS): Promise<CaptureView> {
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

/**
 * Waits until job `id` has ended (done or failed). The runner records a job's end just after its
 * handler recorded the capture's, so a settled capture may briefly have a running job.
 */
export function settledJob(app: App, id: number, timeoutMs = WAIT_MS) {
  return waitFor(
    async () => {
      const job = await app.db.models.Job.findByPk(id);
      return job && (job.state === 'done' || job.state === 'failed') ? job : null;
    },
    timeoutMs,
    `job ${id} to end`,
  );
}

/** The tables of a capture as made: name, columns and row count (the summaries' time fields left out). */
export function tableShapes(tables: readonly { name: string; columns: { name: string; type: string }[]; rows: number }[] | null) {
  return tables === null ? null : tables.map(({ name, columns, rows }) => ({ name, columns, rows }));
}
