import type { Transaction } from 'sequelize';
import { DomainError } from '../errors.ts';
import type { WritePath } from './write-path.ts';

/** Applies a whole batch in one transaction, returning one result per item, in order. */
export type ApplyBatch<I, O> = (items: I[], t: Transaction) => Promise<O[]>;

export interface BatcherOptions<I = unknown> {
  /**
   * Most items committed in one transaction.
   * @default 1000
   */
  maxBatch?: number;
  /**
   * Batches committing at once, each in its own transaction beside the other writes
   * (WritePath.runBeside; capped by the write path's besideWrites). 1: one batch at a time, in turn
   * with every other write. The apply function must then be safe to run concurrently with itself.
   * @default 1
   */
  inFlight?: number;
  /**
   * Items of one key never commit in two batches at once (with inFlight > 1): an item whose key a
   * committing batch holds waits for the next batch. Two batches of one node then never wait on
   * each other's row locks, and a node stopped mid-batch holds each key in one transaction only.
   */
  keyOf?: (item: I) => string;
}

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit: items submitted while a batch is committing are committed together in the next
 * transaction, which starts as soon as a committing one ends (with inFlight > 1, up to that many
 * batches commit at once). Each submit resolves only after the transaction that holds its item has
 * committed. If a batch fails, its items are retried one by one so that one bad item fails alone.
 */
export class Batcher<I, O> {
  #waiting: Waiting<I, O>[] = [];
  /** Flush loops running (each commits one batch at a time). */
  #loops = 0;
  #starting = false;
  readonly #maxBatch: number;
  readonly #inFlight: number;
  readonly #run: <T>(fn: (t: Transaction) => Promise<T>) => Promise<T>;
  readonly #keyOf: ((item: I) => string) | undefined;
  /** Keys held by the batches committing now (with inFlight > 1 and keyOf). */
  readonly #held = new Set<string>();

  constructor(
    private readonly writes: WritePath,
    private readonly apply: ApplyBatch<I, O>,
    opts: BatcherOptions<I>,
  ) {
    this.#maxBatch = opts.maxBatch ?? 1000;
    this.#inFlight = Math.max(1, Math.min(opts.inFlight ?? 1, writes.besideWrites));
    this.#run = this.#inFlight > 1 ? (fn) => writes.runBeside(fn) : (fn) => writes.run(fn);
    this.#keyOf = this.#inFlight > 1 ? opts.keyOf : undefined;
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      if (this.#loops < this.#inFlight && !this.#starting) {
        this.#starting = true;
        this.#loops++;
        // Let requests that arrived in the same turn of the event loop join the batch.
        setImmediate(() => {
          this.#starting = false;
          void this.#flush();
        });
      }
    });
  }

  async #flush(): Promise<void> {
    let batch = this.#take();
    let committing = this.#commit(batch);
    while (batch.length > 0) {
      let results: O[];
      try {
        results = await committing;
      } catch (err) {
        await this.#failed(batch, err);
        this.#release(batch);
        batch = this.#take();
        committing = this.#commit(batch);
        continue;
      }
      // The next batch goes to the database before this one's callers go on: their answers are
      // written while it commits, instead of before it starts.
      const done = batch;
      this.#release(done);
      batch = this.#take();
      committing = this.#commit(batch);
      done.forEach((w, i) => w.resolve(results[i]));
    }
    this.#loops--;
  }

  /** The next batch: the oldest waiting items, leaving those whose key another batch holds. */
  #take(): Waiting<I, O>[] {
    const keyOf = this.#keyOf;
    if (!keyOf) return this.#waiting.splice(0, this.#maxBatch);
    const taken: Waiting<I, O>[] = [];
    const left: Waiting<I, O>[] = [];
    const mine = new Set<string>();
    for (const w of this.#waiting) {
      const key = keyOf(w.item);
      if (taken.length < this.#maxBatch && (mine.has(key) || !this.#held.has(key))) {
        taken.push(w);
        mine.add(key);
      } else {
        left.push(w);
      }
    }
    this.#waiting = left;
    for (const key of mine) this.#held.add(key);
    return taken;
  }

  #release(batch: Waiting<I, O>[]): void {
    const keyOf = this.#keyOf;
    if (keyOf) for (const w of batch) this.#held.delete(keyOf(w.item));
  }

  /** Commits batch in one transaction (none for an empty batch); the results in item order. */
  #commit(batch: Waiting<I, O>[]): Promise<O[]> {
    if (batch.length === 0) return Promise.resolve([]);
    let started = 0n;
    const start = () => void (started = process.hrtime.bigint());
    const items = batch.map((w) => w.item);
    return this.#run((t) => (start(), this.apply(items, t))).then((results) => {
      this.writes.observer.batch?.(batch.length, Number(process.hrtime.bigint() - started) / 1e9);
      return results;
    });
  }

  /** A batch that failed: a host fault fails every item alike; anything else is retried item by item, so that one bad item fails alone. */
  async #failed(batch: Waiting<I, O>[], err: unknown): Promise<void> {
    if (batch.length === 1 || (err instanceof DomainError && err.kind === 'unavailable')) {
      for (const w of batch) w.reject(err);
      return;
    }
    for (const w of batch) {
      try {
        const [result] = await this.#run((t) => this.apply([w.item], t));
        w.resolve(result);
      } catch (itemErr) {
        w.reject(itemErr);
      }
    }
  }
}
