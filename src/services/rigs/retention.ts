import type { Database } from '../../db/index.ts';
import { deleteReportsBefore, newestReportAt, reportClockNow } from '../../db/rigs.ts';

export interface RetentionOptions {
  /** Rows deleted per write transaction. @default 500 */
  batchSize?: number;
  /** Time between runs, ms. @default 3600000 (hourly) */
  intervalMs?: number;
  /** First run after start(), ms. @default 30000 */
  firstRunMs?: number;
  /** Pause between two batches of one run, ms, so report batches commit in between. @default 20 */
  pauseMs?: number;
  /** Told about a failed scheduled run (the next run retries). @default ignore */
  onError?: (err: unknown) => void;
  /** Told what each scheduled run removed (to log it). @default ignore */
  onPruned?: (run: PruneRun) => void;
}

/** One run: how many reports it removed, those received before `cutoff`, measured from `reference`. */
export interface PruneRun {
  removed: number;
  cutoff: Date;
  /** The earlier of the clock's now and the newest stored report. */
  reference: Date;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Keeps the rig report history bounded: rows older than rigs.history_retention_days are deleted
 * in small batches, each its own short transaction on the write path. The window is measured from
 * the earlier of now (the database's clock) and the newest stored report: a clock set far ahead
 * never makes the whole history look old. Report batches queued in
 * the meantime commit between two prune batches, so reports never wait behind a whole run.
 */
export class RigRetention {
  readonly #db: Database;
  readonly #days: number;
  readonly #batchSize: number;
  readonly #intervalMs: number;
  readonly #firstRunMs: number;
  readonly #pauseMs: number;
  readonly #onError: (err: unknown) => void;
  readonly #onPruned: (run: PruneRun) => void;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<number> | null = null;
  #stopped = false;

  constructor(db: Database, retentionDays: number, opts: RetentionOptions = {}) {
    this.#db = db;
    this.#days = retentionDays;
    this.#batchSize = opts.batchSize ?? 500;
    this.#intervalMs = opts.intervalMs ?? 3_600_000;
    this.#firstRunMs = opts.firstRunMs ?? 30_000;
    this.#pauseMs = opts.pauseMs ?? 20;
    this.#onError = opts.onError ?? (() => {});
    this.#onPruned = opts.onPruned ?? (() => {});
  }

  /** The oldest received_at kept at `now`. */
  cutoff(now: Date): Date {
    return new Date(now.getTime() - this.#days * 86_400_000);
  }

  /** Deletes every report older than the cutoff, batch by batch; resolves with the count. */
  prune(now: Date = new Date()): Promise<number> {
    if (this.#running) return this.#running;
    const run = this.#prune(this.cutoff(now)).finally(() => {
      this.#running = null;
    });
    this.#running = run;
    return run;
  }

  /** The scheduled run: the window measured from min(now, newest stored report); resolves with what it removed. */
  async pruneByNewest(): Promise<PruneRun> {
    const [now, newest] = await Promise.all([reportClockNow(this.#db), newestReportAt(this.#db)]);
    const reference = newest !== null && newest.getTime() < now.getTime() ? newest : now;
    const removed = await this.prune(reference);
    return { removed, cutoff: this.cutoff(reference), reference };
  }

  /** How far the newest stored report lies ahead of the clock (ms), or null when it does not. */
  async aheadOfClock(): Promise<{ newest: Date; aheadMs: number } | null> {
    const [now, newest] = await Promise.all([reportClockNow(this.#db), newestReportAt(this.#db)]);
    if (newest === null || newest.getTime() <= now.getTime()) return null;
    return { newest, aheadMs: newest.getTime() - now.getTime() };
  }

  async #prune(cutoff: Date): Promise<number> {
    let total = 0;
    while (!this.#stopped) {
      const deleted = await deleteReportsBefore(this.#db, cutoff, this.#batchSize);
      total += deleted;
      if (deleted < this.#batchSize) break;
      // Writes queued meanwhile (report batches) are ahead of the next batch on the write path;
      // the pause also leaves the writer idle part of the time, for reports arriving later.
      await sleep(this.#pauseMs);
    }
    return total;
  }

  /** Runs prune on a schedule (what `rigd serve` starts). Failures are reported and retried next time. */
  start(): void {
    if (this.#timer) return;
    // Started again after a stop (the cluster duties move between nodes).
    this.#stopped = false;
    const tick = (delay: number) => {
      this.#timer = setTimeout(() => {
        this.pruneByNewest()
          .then(this.#onPruned, this.#onError)
          .finally(() => {
            if (!this.#stopped) tick(this.#intervalMs);
          });
      }, delay);
      this.#timer.unref();
    };
    tick(this.#firstRunMs);
  }

  /** Stops the schedule; a run in progress ends after its current batch. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running?.catch(() => 0);
  }
}
