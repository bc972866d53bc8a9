// A notify worker on a test data_dir's database, as rigd serve runs it (polling every 50 ms), with
// what the doctor notification tests do with it: queue an incident event, wait for the jobs to settle.
import type { Database } from '../../src/db/index.ts';
import { createLogger } from '../../src/log.ts';
import type { IncidentEvent } from '../../src/services/notify/message.ts';
import { Notifier } from '../../src/services/notify/notifier.ts';
import { NotifyWorker } from '../../src/services/notify/worker.ts';
import { notifyJobs, type NotifyRow } from '../services/notify/events.ts';
import { waitFor } from './jobs.ts';
import { testConfig } from './server.ts';

export interface NotifyWorkerRun {
  /** Queues the event's notifications (one job per target), as the alerts service does. */
  enqueue(event: IncidentEvent): Promise<unknown>;
  /** Waits until there are n notify jobs, each done or failed. */
  settled(n: number): Promise<NotifyRow[]>;
  stop(): Promise<void>;
}

/** Starts a notify worker with this notify config on db (of dataDir). */
export async function startNotifyWorker(db: Database, dataDir: string, notify: Record<string, unknown>): Promise<NotifyWorkerRun> {
  const config = testConfig({ data_dir: dataDir, notify } as Parameters<typeof testConfig>[0]);
  const worker = new NotifyWorker(db, config, createLogger('error', () => undefined), { pollMs: 50 });
  await worker.start();
  const notifier = new Notifier(config.notify);
  return {
    enqueue: (event) => db.writes.run((tx) => notifier.enqueue(event, tx)),
    settled: (n) =>
      waitFor(async () => {
        const rows = await notifyJobs(db);
        return rows.length === n && rows.every((r) => r.state === 'done' || r.state === 'failed') ? rows : null;
      }, 60_000, `${n} notify jobs to settle`, 50),
    stop: () => worker.stop(),
  };
}
