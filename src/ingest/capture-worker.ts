/**
 * The ingester as a background task of `rigd serve`: a JobRunner for `capture` jobs, a sweep that
 * fails captures whose job was given up by the runner (its process died on the last attempt), and
 * removal of temp files left by a process that died mid-copy.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Op } from 'sequelize';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/index.ts';
import type { ObjectStorage } from '../storage/contract.ts';
import { CAPTURE_JOB, Ingester, type CaptureJob } from './ingester.ts';
import { JobRunner, type RunnerLogger, type RunnerOptions } from '../jobs/runner.ts';

/** How long SIGTERM lets running ingests finish before they are released to the queue (rigd.service allows 45 s in all). */
export const DRAIN_TIMEOUT_MS = 20_000;
const SWEEP_MS = 2000;

export function ingestTmpDir(config: Readonly<Config>): string {
  return path.join(path.resolve(config.data_dir), 'ingest-tmp');
}

export class CaptureWorker {
  readonly runner: JobRunner;
  #sweep: NodeJS.Timeout | undefined;
  #sweeping: Promise<void> | undefined;

  constructor(
    private readonly db: Database,
    storage: ObjectStorage,
    private readonly config: Readonly<Config>,
    private readonly log: RunnerLogger,
    runnerOptions: Partial<RunnerOptions> = {},
  ) {
    this.runner = new JobRunner(db, {
      concurrency: config.ingest.concurrency,
      jobTimeoutMs: config.ingest.job_timeout_ms,
      logger: log,
      ...runnerOptions,
    });
    const ingester = new Ingester(db, storage, {
      maxBytes: config.storage.max_upload_size,
      jobTimeoutMs: config.ingest.job_timeout_ms,
      bytesPerSecond: config.ingest.read_bytes_per_s,
      tmpDir: ingestTmpDir(config),
      logger: log,
    });
    this.runner.handle<CaptureJob>(CAPTURE_JOB, ingester.handle);
  }

  async start(): Promise<void> {
    await this.#removeStaleTemp();
    await this.sweep();
    await this.runner.start();
    this.#sweep = setInterval(() => {
      this.#sweeping ??= this.sweep()
        .then(() => undefined)
        .catch((err) => this.log.error('capture sweep failed', { error: String(err) }))
        .finally(() => (this.#sweeping = undefined));
    }, SWEEP_MS);
  }

  async stop(): Promise<void> {
    clearInterval(this.#sweep);
    const { drained, released } = await this.runner.stop({ timeoutMs: DRAIN_TIMEOUT_MS });
    if (!drained) this.log.warn('ingest jobs released to the queue at shutdown', { jobs: released });
    await this.#sweeping;
  }

  /** Captures still queued or ingesting whose job has failed take the job's failure. Returns how many. */
  async sweep(): Promise<number> {
    const { Capture, Job } = this.db.models;
    const open = await Capture.findAll({ attributes: ['id', 'job_id'], where: { state: ['queued', 'ingesting'], job_id: { [Op.ne]: null } } });
    if (open.length === 0) return 0;
    const failed = await Job.findAll({ attributes: ['id'], where: { id: open.map((c) => c.job_id!), state: 'failed' } });
    if (failed.length === 0) return 0;
    let n = 0;
    await this.db.writes.run(async (transaction) => {
      for (const { id } of failed) {
        const job = await Job.findByPk(id, { transaction });
        if (!job || job.state !== 'failed') continue;
        const [count] = await Capture.update(
          { state: 'failed', error_code: 'gave_up', last_error: job.last_error ?? 'the ingest job failed', finished_at: job.finished_at ?? new Date() },
          { where: { job_id: id, state: ['queued', 'ingesting'] }, transaction },
        );
        n += count;
      }
    });
    return n;
  }

  /** Temp copies older than a job may run belong to no live job. */
  async #removeStaleTemp(): Promise<void> {
    const dir = ingestTmpDir(this.config);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return;
    }
    const cutoff = Date.now() - this.config.ingest.job_timeout_ms;
    for (const name of names) {
      const file = path.join(dir, name);
      const st = await stat(file).catch(() => null);
      if (st && st.mtimeMs < cutoff) await rm(file, { force: true });
    }
  }
}
