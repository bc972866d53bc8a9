import { Counter, Histogram, type Registry } from 'prom-client';
import { isDriverFailure } from '../../db/faults.ts';
import type { WriteObserver } from '../../db/write-path.ts';
import { DomainError } from '../../errors.ts';

const SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** A COMMIT is usually well under a millisecond (no fsync in WAL with synchronous = NORMAL). */
const COMMIT_SECONDS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const ITEMS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];

/** The one writer: transactions, group-commit batches, and writes the database refused. */
export class WriteMetrics {
  readonly #transactions: Histogram;
  readonly #batchSize: Histogram;
  readonly #batchSeconds: Histogram;
  readonly #commits: Histogram;
  readonly #errors: Counter;

  constructor(registers: Registry[]) {
    this.#transactions = new Histogram({
      name: 'rigd_write_transaction_duration_seconds',
      help: 'Time of each committed write transaction in the writer (waiting in line excluded).',
      buckets: SECONDS,
      registers,
    });
    this.#batchSize = new Histogram({
      name: 'rigd_write_batch_size',
      help: 'Items (rig reports, upload reservations) committed together in one group-commit transaction.',
      buckets: ITEMS,
      registers,
    });
    this.#batchSeconds = new Histogram({
      name: 'rigd_write_batch_commit_duration_seconds',
      help: 'Time of each group-commit batch, from its first statement to COMMIT.',
      buckets: SECONDS,
      registers,
    });
    this.#commits = new Histogram({
      name: 'rigd_db_commit_seconds',
      help: 'Time of each write transaction\'s COMMIT alone (WAL append, and the fsync when a checkpoint is due).',
      buckets: COMMIT_SECONDS,
      registers,
    });
    this.#errors = new Counter({
      name: 'rigd_write_errors_total',
      help: 'Write transactions the database refused or failed (disk full, I/O error, busy), rolled back.',
      registers,
    });
  }

  /** The hook the write path calls. */
  readonly observer: WriteObserver = {
    commit: (seconds) => this.#commits.observe(seconds),
    transaction: (seconds, error) => {
      if (error === undefined) this.#transactions.observe(seconds);
      else if (isWriteFailure(error)) this.#errors.inc();
    },
    batch: (size, seconds) => {
      this.#batchSize.observe(size);
      this.#batchSeconds.observe(seconds);
    },
  };
}

/**
 * The database failed the write (disk full, I/O error, busy, connection gone), or a service turned
 * that into "unavailable". A refusal thrown inside a transaction (not found, conflict) is not one.
 */
export function isWriteFailure(error: unknown): boolean {
  if (isDriverFailure(error)) return true;
  return error instanceof DomainError && error.kind === 'unavailable';
}
