import PQueue from 'p-queue';
import type { Sequelize, Transaction } from 'sequelize';
import { DomainError } from '../errors.ts';
import { Batcher, type ApplyBatch, type BatcherOptions } from './batcher.ts';
import { databaseFault } from './faults.ts';

/** Least time between two checkpoints of the WAL started by the write path, ms. */
const CHECKPOINT_INTERVAL_MS = 1000;

/** How the last write of this process ended, for /healthz. */
export interface WriteHealth {
  /** The host fault the last write failed with (disk_full, database_read_only), or null when it committed. */
  failing: DomainError | null;
  /** When it happened (ms since the epoch), 0 before the first write. */
  at: number;
}

/**
 * The one writer. Every write transaction of this process runs here, one after another,
 * so SQLite never sees two writers from rigd itself (other processes wait on busy_timeout).
 */
export class WritePath {
  readonly #queue = new PQueue({ concurrency: 1 });
  /** Transactions of runBeside (null: the engine has one writer, they queue with the others). */
  readonly #beside: PQueue | null;
  readonly #sequelize: Sequelize;
  readonly #dataDir: string | undefined;
  #health: WriteHealth = { failing: null, at: 0 };
  /** SQLite's WAL: the write path checkpoints it itself, off the COMMIT (see #checkpoint). */
  readonly #walCheckpoints: boolean;
  /** The writer connection no longer checkpoints in its COMMITs (set by its first transaction). */
  #ownCheckpoints = false;
  #checkpointing = false;
  #lastCheckpoint = 0;
  /** Told about every transaction and batch (metrics); set with observe(). */
  observer: WriteObserver = {};

  /**
   * dataDir (SQLite) lets an I/O error on a full disk count as disk_full; walCheckpoints (SQLite)
   * moves the WAL checkpoint out of the COMMIT.
   */
  constructor(sequelize: Sequelize, opts: { dataDir?: string; walCheckpoints?: boolean; besideWrites?: number } = {}) {
    this.#sequelize = sequelize;
    this.#beside = (opts.besideWrites ?? 1) > 1 ? new PQueue({ concurrency: opts.besideWrites }) : null;
    this.#dataDir = opts.dataDir;
    this.#walCheckpoints = opts.walCheckpoints ?? false;
    this.#ownCheckpoints = !this.#walCheckpoints;
  }

  /**
   * Runs fn in one write transaction after every write queued before it; resolves after COMMIT.
   * A full disk or an unwritable database rejects with DiskFull / DatabaseReadOnly; the next write
   * tries again (nothing to reset).
   */
  run<T>(fn: (t: Transaction) => Promise<T>): Promise<T> {
    return this.#queue.add(() => this.#transact(fn)) as Promise<T>;
  }

  /**
   * Runs fn in a write transaction of its own beside the others, where the engine takes several
   * writers at once (PostgreSQL: a connection of the pool each, at most `besideWrites` at a time);
   * on SQLite, in turn with every other write, as run() does.
   */
  runBeside<T>(fn: (t: Transaction) => Promise<T>): Promise<T> {
    if (!this.#beside) return this.run(fn);
    return this.#beside.add(() => this.#transact(fn)) as Promise<T>;
  }

  /** Write transactions that may run at once through runBeside (1 on SQLite). */
  get besideWrites(): number {
    return this.#beside ? this.#beside.concurrency : 1;
  }

  async #transact<T>(fn: (t: Transaction) => Promise<T>): Promise<T> {
    {
      const started = process.hrtime.bigint();
      const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
      // When fn's statements are done and COMMIT is sent: the rest of the transaction is the commit.
      let applied = 0n;
      try {
        const result = await this.#sequelize.transaction(async (t) => {
          if (!this.#ownCheckpoints) {
            await this.#sequelize.query('PRAGMA wal_autocheckpoint = 0', { transaction: t });
            this.#ownCheckpoints = true;
          }
          const value = await fn(t);
          applied = process.hrtime.bigint();
          return value;
        });
        this.#health = { failing: null, at: Date.now() };
        this.observer.commit?.(Number(process.hrtime.bigint() - applied) / 1e9);
        this.observer.transaction?.(seconds());
        if (this.#walCheckpoints) this.#checkpoint();
        return result;
      } catch (err) {
        this.observer.transaction?.(seconds(), err);
        const fault = databaseFault(err, this.#dataDir);
        if (fault) {
          this.#health = { failing: fault, at: Date.now() };
          throw fault;
        }
        throw err;
      }
    }
  }

  /**
   * Copies the WAL back into the database file at most once a second while writes happen, on the
   * read connection with a PASSIVE checkpoint: it waits for nobody and the writer goes on appending
   * meanwhile. Left to SQLite, the checkpoint (with its fsync) would run inside whichever COMMIT
   * crossed 1,000 WAL pages, and every report queued behind that COMMIT would wait for it.
   */
  #checkpoint(): void {
    const now = Date.now();
    if (this.#checkpointing || now - this.#lastCheckpoint < CHECKPOINT_INTERVAL_MS) return;
    this.#checkpointing = true;
    this.#lastCheckpoint = now;
    this.#sequelize
      .query('PRAGMA wal_checkpoint(PASSIVE)', { raw: true })
      // A failed checkpoint (full disk, closing) leaves the frames in the WAL: the next one retries.
      .catch(() => undefined)
      .finally(() => {
        this.#checkpointing = false;
      });
  }

  /** How the last write ended. */
  get health(): WriteHealth {
    return this.#health;
  }

  /** Reports each transaction and group-commit batch to observer (one observer; the last set wins). */
  observe(observer: WriteObserver): void {
    this.observer = observer;
  }

  /** Writes waiting or running. */
  get pending(): number {
    return this.#queue.size + this.#queue.pending + (this.#beside ? this.#beside.size + this.#beside.pending : 0);
  }

  /** Resolves when no write is queued or running. */
  async drain(): Promise<void> {
    await Promise.all([this.#queue.onIdle(), this.#beside?.onIdle()]);
  }

  /** A group-commit batcher over this write path. */
  batcher<I, O>(apply: ApplyBatch<I, O>, opts: BatcherOptions = {}): Batcher<I, O> {
    return new Batcher(this, apply, opts);
  }
}

/** Hooks for metrics; they must not throw. */
export interface WriteObserver {
  /** A write transaction ended after `seconds` in the writer (queue wait excluded): committed, or rolled back with error. */
  transaction?(seconds: number, error?: unknown): void;
  /** A write transaction's COMMIT (the WAL append, and its fsync when one is due) took `seconds`. */
  commit?(seconds: number): void;
  /** A group-commit batch of `size` items committed in one transaction of `seconds`. */
  batch?(size: number, seconds: number): void;
}
