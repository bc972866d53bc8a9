import PQueue from 'p-queue';
import type { Sequelize, Transaction } from 'sequelize';
import { DomainError } from '../errors.ts';
import { Batcher, type ApplyBatch, type BatcherOptions } from './batcher.ts';
import { databaseFault } from './faults.ts';

/** Least time between two checkpoints of the WAL started by the write path, ms. */
const CHECKPOINT_EVERY_MS = 1000;

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
  readonly #walCheckpoint: (() => Promise<void>) | undefined;
  readonly #checkpointEveryMs: number;
  /** SQLite: frees what a failed write transaction left behind (a transaction whose COMMIT failed). */
  readonly #afterFailure: (() => Promise<void>) | undefined;
  /** The checkpoint running (both steps), if any: drain() waits for it. */
  #checkpointing: Promise<void> | null = null;
  #lastCheckpoint = 0;
  /** Run first in every write transaction of run() and runBeside() (PostgreSQL: its lock and statement bounds). */
  readonly #begin: ((t: Transaction) => Promise<void>) | undefined;
  /** Told about every transaction and batch (metrics); set with observe(). */
  observer: WriteObserver = {};

  /**
   * dataDir (SQLite) lets an I/O error on a full disk count as disk_full; checkpoint (SQLite: one
   * PASSIVE checkpoint of the WAL; its connections never checkpoint in a COMMIT) moves the WAL
   * checkpoint out of the COMMIT, into the write path; afterFailure runs after a write transaction
   * failed, before the next write.
   */
  constructor(
    sequelize: Sequelize,
    opts: {
      dataDir?: string;
      checkpoint?: () => Promise<void>;
      checkpointEveryMs?: number;
      afterFailure?: () => Promise<void>;
      besideWrites?: number;
      begin?: (t: Transaction) => Promise<void>;
    } = {},
  ) {
    this.#begin = opts.begin;
    this.#sequelize = sequelize;
    this.#beside = (opts.besideWrites ?? 1) > 1 ? new PQueue({ concurrency: opts.besideWrites }) : null;
    this.#dataDir = opts.dataDir;
    this.#walCheckpoint = opts.checkpoint;
    this.#checkpointEveryMs = opts.checkpointEveryMs ?? CHECKPOINT_EVERY_MS;
    this.#afterFailure = opts.afterFailure;
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

  #transact<T>(fn: (t: Transaction) => Promise<T>): Promise<T> {
    return this.#observed(async (applied) => {
      try {
        return await this.#sequelize.transaction(async (t) => {
          if (this.#begin) await this.#begin(t);
          const value = await fn(t);
          applied();
          return value;
        });
      } catch (err) {
        await this.#afterFailure?.().catch(() => undefined);
        throw err;
      }
    });
  }

  /**
   * One write transaction, timed for the observer, its host fault (full disk, read-only database)
   * typed and kept for /healthz. `write` calls `applied` when its statements are done and COMMIT is
   * sent: the rest of the transaction is the commit.
   */
  async #observed<T>(write: (applied: () => void) => Promise<T>): Promise<T> {
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    let applied = 0n;
    try {
      const result = await write(() => (applied = process.hrtime.bigint()));
      this.#health = { failing: null, at: Date.now() };
      this.observer.commit?.(Number(process.hrtime.bigint() - applied) / 1e9);
      this.observer.transaction?.(seconds());
      this.#checkpoint();
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

  /**
   * Copies the WAL back into the database file at most once a second while writes happen, in two
   * PASSIVE checkpoints on a connection of their own. The first, beside the writes, copies the bulk
   * and waits for nobody (left to SQLite, the checkpoint, with its fsync, would run inside whichever
   * COMMIT crossed 1,000 WAL pages, and every report queued behind that COMMIT would wait for it).
   * The second runs in turn with the writes and copies only what they added meanwhile: the WAL is
   * then copied back whole, so the next write starts it over from its beginning. Without it, under
   * steady writes a checkpoint never caught up with the writer and the WAL grew without bound (tens
   * of MB a second, every new block zeroed by the file system).
   */
  #checkpoint(): void {
    const checkpoint = this.#walCheckpoint;
    const now = Date.now();
    if (!checkpoint || this.#checkpointing || now - this.#lastCheckpoint < this.#checkpointEveryMs) return;
    this.#lastCheckpoint = now;
    this.#checkpointing = checkpoint()
      .then(() => this.#queue.add(checkpoint))
      // A failed checkpoint (full disk, closing) leaves the frames in the WAL: the next one retries.
      .catch(() => undefined)
      .finally(() => {
        this.#checkpointing = null;
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

  /** Resolves when no write (nor a checkpoint of the write path) is queued or running. */
  async drain(): Promise<void> {
    await Promise.all([this.#queue.onIdle(), this.#beside?.onIdle(), this.#checkpointing]);
    // A checkpoint's second step joins the queue once its first is done.
    await this.#queue.onIdle();
  }

  /** A group-commit batcher over this write path. */
  batcher<I, O>(apply: ApplyBatch<I, O>, opts: BatcherOptions<I> = {}): Batcher<I, O> {
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
