/** Captures in a data_dir that a child `rigd serve` works on: objects put in its embedded store, capture rows read back. */
import { createReadStream, statSync } from 'node:fs';
import { openDatabase } from '../../src/db/index.ts';
import { captureState } from '../../src/db/models/capture-state.ts';
import { EmbeddedStorage } from '../../src/storage/embedded.ts';
import { testDb } from './dialect.ts';
import { testConfig } from './server.ts';

export async function put(dataDir: string, key: string, file: string): Promise<void> {
  const storage = new EmbeddedStorage(testConfig({ data_dir: dataDir }));
  await storage.ensureBucket();
  await storage.putObject(key, createReadStream(file), { expectedSize: statSync(file).size });
}

export async function captureRow(dataDir: string, key: string) {
  const db = await openDatabase(dataDir, testDb(dataDir));
  try {
    let row = await db.models.Capture.findOne({ where: { key } });
    if (!row) return null;
    // The capture's run state is its job's.
    const job = row.job_id ? await db.models.Job.findByPk(row.job_id) : null;
    // Read again after the job: a job that finished between the two reads committed the capture's
    // results with it (on PostgreSQL the first read may predate that commit).
    if (job) row = (await db.models.Capture.findOne({ where: { key } })) ?? row;
    return {
      ...row.get({ plain: true }),
      state: captureState(job?.state),
      attempts: job?.attempts ?? 0,
      progress: job?.progress ?? null,
      last_error: job?.last_error ?? null,
      started_at: job?.started_at ?? null,
      count: await db.models.Capture.count({ where: { key } }),
      jobs: await db.models.Job.count(),
    };
  } finally {
    await db.close();
  }
}
