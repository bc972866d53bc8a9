/**
 * The ingester as a background task of `rigd serve`: a JobRunner for `capture` jobs, and removal of
 * temp files left by a process that died mid-copy. A capture's state is its job's, so there is
 * nothing to keep in step.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/index.ts';
import type { ObjectStorage } from '../storage/contract.ts';
import { openStoreWriter, type CaptureStoreWriter } from '../db/capture-store/index.ts';
import { runnerPollMs, watchWrites } from '../db/write-watch.ts';
import type { ImportStep } from './import-step.ts';
import { CAPTURE_JOB, type CaptureJob } from './capture-job.ts';
import { Ingester } from './ingester.ts';
import { storeImport } from './store-import.ts';
import { JobRunner, type RunnerLogger, type RunnerOptions } from '../jobs/runner.ts';

/** How long SIGTERM lets running ingests finish before they are released to the queue (rigd.service allows 45 s in all). */
export const DRAIN_TIMEOUT_MS = 20_000;

export function ingestTmpDir(config: Readonly<Config>): string {
  return path.join(path.resolve(config.data_dir), 'ingest-tmp');
}

export class CaptureWorker {
  readonly runner: JobRunner;
  /** The capture store's writer: opened at start, closed at stop (this worker is its one owner). */
  #store: CaptureStoreWriter | undefined;
  #unwatch: (() => void) | undefined;

  constructor(
    private readonly db: Database,
    storage: ObjectStorage,
    private readonly config: Readonly<Config>,
    private readonly log: RunnerLogger,
    runnerOptions: Partial<RunnerOptions> = {},
    /** The pipeline's inspect and import. @default storeImport into the capture store in data_dir */
    importStep?: ImportStep,
  ) {
    const pollMs = runnerPollMs(db);
    this.runner = new JobRunner(db, {
      concurrency: config.ingest.concurrency,
      jobTimeoutMs: config.ingest.job_timeout_ms,
      // A dead node's capture is claimed again once its lease ends (renewed every third of it while it runs).
      leaseMs: config.ingest.lease_s * 1000,
      // Jobs queued by another process (`rigd ingest`) wake the runner: NOTIFY on PostgreSQL, a
      // watch on the database's WAL on SQLite (start()); polling is the fallback, often on SQLite.
      ...(pollMs === undefined ? {} : { pollMs }),
      logger: log,
      ...runnerOptions,
    });
    const ingester = new Ingester(db, storage, {
      maxBytes: config.storage.max_upload_size,
      jobTimeoutMs: config.ingest.job_timeout_ms,
      bytesPerSecond: config.ingest.read_bytes_per_s,
      tmpDir: ingestTmpDir(config),
      logger: log,
      importStep:
        importStep ??
        ((file, captureId, opts) => {
          if (!this.#store) throw new Error('the capture store is not open');
          return storeImport(this.#store, config.storage.max_upload_size)(file, captureId, opts);
        }),
    });
    this.runner.handle<CaptureJob>(CAPTURE_JOB, ingester.handle);
  }

  async start(): Promise<void> {
    await this.#removeStaleTemp();
    // The store's import holds a transaction with prepared statements: a session (direct_url past a pooler).
    const c = this.config.captures;
    this.#store = await openStoreWriter(this.config.data_dir, this.config.database.direct_url || this.config.database.url, {
      maxTables: c.max_tables,
      maxColumns: c.max_columns,
      maxNewSharedColumns: c.max_new_shared_columns,
      maxSharedColumns: c.max_shared_columns,
    });
    await this.runner.start();
    this.#unwatch = watchWrites(this.db, this.config.data_dir, () => this.runner.wake());
  }

  async stop(): Promise<void> {
    this.#unwatch?.();
    this.#unwatch = undefined;
    const { drained, released } = await this.runner.stop({ timeoutMs: DRAIN_TIMEOUT_MS });
    if (!drained) this.log.warn('ingest jobs released to the queue at shutdown', { jobs: released });
    const store = this.#store;
    this.#store = undefined;
    await store?.close();
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
