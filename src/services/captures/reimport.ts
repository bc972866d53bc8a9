/**
 * Importing ingested captures again (`rigd captures reimport --all|--rig ID|--since T`): the way to
 * rebuild a lost or damaged capture store from the files in storage. Each capture gets a new ingest
 * job (CaptureService.enqueueIn); its import replaces that capture's rows in one transaction, so a
 * capture is never half there. Only ingested captures are queued: a queued or ingesting one is on its
 * way already, a failed one is `rigd ingest KEY`'s to retry.
 */
import { captureById, captureJob, ingestedCaptureIds } from '../../db/captures.ts';
import type { Database } from '../../db/index.ts';
import { captureState } from '../../db/models/capture.ts';
import { InvalidInput } from '../../errors.ts';
import type { CaptureService } from './service.ts';

export interface ReimportFilter {
  /** Every ingested capture. */
  all?: boolean;
  /** Only captures of this rig. */
  rig?: string;
  /** Only captures whose last import finished at or after this time. */
  since?: Date;
}

export interface Requeued {
  id: number;
  key: string;
  rig_id: string | null;
  /** The new job. */
  job_id: number;
}

/** Captures queued per write transaction: the write path is never held long. */
const BATCH = 100;

function selection(filter: ReimportFilter): { rig?: string; since?: Date } {
  if (!filter.all && filter.rig === undefined && filter.since === undefined) {
    throw new InvalidInput('say which captures to import again: --all, --rig ID or --since T', [{ field: 'filter', message: 'none given' }]);
  }
  return { ...(filter.rig !== undefined ? { rig: filter.rig.toLowerCase() } : {}), ...(filter.since !== undefined ? { since: filter.since } : {}) };
}

/**
 * Queues every ingested capture the filter selects for a new import, oldest first, and returns
 * them. A capture whose state changed in between (queued by someone else) is left out.
 */
export async function reimportCaptures(db: Database, captures: CaptureService, filter: ReimportFilter): Promise<Requeued[]> {
  const where = selection(filter);
  const queued: Requeued[] = [];
  let after = 0;
  for (;;) {
    const page = await ingestedCaptureIds(db, where, after, BATCH);
    if (page.length === 0) return queued;
    after = page[page.length - 1]!;
    const done = await db.writes.run(async (transaction) => {
      const out: Requeued[] = [];
      for (const id of page) {
        const row = await captureById(db, id, transaction);
        const job = row ? await captureJob(db, row, transaction) : null;
        if (!row || captureState(job?.state) !== 'ingested') continue;
        const next = await captures.enqueueIn(transaction, row);
        out.push({ id: row.id, key: row.key, rig_id: row.rig_id, job_id: next!.id });
      }
      return out;
    });
    queued.push(...done);
  }
}
