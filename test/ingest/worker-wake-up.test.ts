// The capture worker starts a capture job queued by another process (as `rigd ingest` queues it) at
// once, not at its next poll: woken by NOTIFY on PostgreSQL and by the database's WAL file changing
// on SQLite. The runner here polls every 10 minutes: only a wake-up can start the job within the bound.
import test from 'tape';
import { CaptureWorker } from '../../src/ingest/capture-worker.ts';
import { CAPTURE_JOB } from '../../src/ingest/capture-job.ts';
import { getJob } from '../../src/jobs/read.ts';
import { silentLogger } from '../../src/log.ts';
import { openApp } from '../../src/services/app.ts';
import { enqueueFromChild, waitFor } from '../helpers/jobs.ts';
import { testConfig } from '../helpers/server.ts';

const NO_POLLING_MS = 600_000;
/** Generous (a loaded machine is slow): a wake-up takes milliseconds; the poll would take ten minutes. */
const BOUND_MS = 60_000;

test('a capture job queued by another process starts without a poll', async (t) => {
  const app = await openApp(testConfig());
  const worker = new CaptureWorker(app.db, app.storage, app.config, silentLogger, { pollMs: NO_POLLING_MS });
  try {
    await worker.start();
    for (let round = 1; round <= 3; round++) {
      const { ids } = await enqueueFromChild(app.config.data_dir, CAPTURE_JOB, 1);
      // No such capture: the job is claimed and fails for good at once (capture_missing).
      const job = await waitFor(async () => {
        const j = await getJob(app.db, ids[0]!);
        return j && j.state !== 'queued' && j.state !== 'running' ? j : null;
      }, BOUND_MS, `job ${ids[0]} from another process to run`);
      t.deepEqual([job.state, job.errorCode], ['failed', 'capture_missing'], `round ${round}: the job from another process ran without a poll`);
    }
  } finally {
    await worker.stop();
    await app.close();
  }
});
