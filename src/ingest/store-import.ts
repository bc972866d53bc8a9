// The import step rigd serve runs (IngesterOptions.importStep): one capture child inspects the
// file and streams its rows into the capture store, and the store commits only under the job's lease.
import type { CaptureStoreWriter } from '../db/capture-store/writer.ts';
import { LeaseLostError } from '../jobs/errors.ts';
import { leaseHeldQuery } from '../jobs/store.ts';
import type { CaptureInfo } from './capture-file.ts';
import { importCapture } from './import.ts';
import type { ImportStep } from './import-step.ts';
/** The import into a capture store (importCapture: one child inspects, then streams the rows). */
export function storeImport(store: CaptureStoreWriter, maxBytes: number): ImportStep {
  return async (file, captureId, opts) => {
    let info: CaptureInfo | undefined;
    const tables = await importCapture(file, captureId, store, {
      maxBytes,
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      onStep: opts.onStep,
      onProgress: (p) => opts.onProgress({ rows: p.rows, bytes: p.bytes }),
      onInspected: (i) => (info = i),
      ...(opts.onTimings ? { onTimings: opts.onTimings } : {}),
      beforeCommit: async (query) => {
        // Not before the file is known to be the version stored (it is hashed meanwhile).
        await opts.verified;
        // A run whose lease is lost (its signal says so) or, on PostgreSQL, whose job row no longer
        // names this claim (checked and locked in the store's own transaction) commits nothing.
        if (opts.signal.aborted) throw new LeaseLostError();
        if (query && opts.lease) {
          const { text, values } = leaseHeldQuery(opts.lease);
          if ((await query(text, values)) === 0) throw new LeaseLostError();
        }
      },
    });
    if (!info) throw new Error('the import finished without the inspection of the capture');
    return { info, tables };
  };
}
