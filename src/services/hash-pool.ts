import PQueue from 'p-queue';
import { Throttled } from '../errors.ts';

export interface HashPoolLimits {
  /** bcrypt operations running at once (each holds one libuv thread for its whole duration). */
  concurrency: number;
  /** Operations allowed to wait; past this, new ones are refused with 429 login_busy. */
  maxQueued: number;
}

/** What the pool has done, for tests and metrics. */
export interface HashPoolStats {
  /** Operations that reached bcrypt (started), since the pool was made. */
  started: number;
  /** Operations refused because the queue was full. */
  refused: number;
  running: number;
  queued: number;
}

/** Assumed duration of one operation until one has been measured (cost 12 on a small CPU). */
const FIRST_GUESS_MS = 250;

/**
 * The bounded pool that password hashing runs on. bcrypt and sqlite3 share libuv's thread pool:
 * uncapped, a burst of logins takes every thread for seconds and the database's work waits behind
 * it. Capping bcrypt at `concurrency` operations keeps the other threads free for the database and
 * the file system. Excess operations wait in order; past `maxQueued` waiting, new ones are refused
 * at once with Retry-After (an estimate of when the queue will have drained).
 */
export class HashPool {
  readonly #queue: PQueue;
  readonly #maxQueued: number;
  readonly #concurrency: number;
  #avgMs = FIRST_GUESS_MS;
  #started = 0;
  #refused = 0;

  constructor(limits: HashPoolLimits) {
    this.#concurrency = limits.concurrency;
    this.#maxQueued = limits.maxQueued;
    this.#queue = new PQueue({ concurrency: limits.concurrency });
  }

  /** Runs `work` when a slot is free; throws Throttled (login_busy) at once when too many wait. */
  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#queue.size >= this.#maxQueued) {
      this.#refused++;
      const waitS = Math.max(1, Math.ceil(((this.#queue.size + this.#queue.pending) / this.#concurrency) * this.#avgMs / 1000));
      return Promise.reject(new Throttled(`too many logins in progress; try again in ${waitS} s`, waitS, 'login_busy'));
    }
    return this.#queue.add(async () => {
      this.#started++;
      const start = performance.now();
      try {
        return await work();
      } finally {
        // Moving average of the operation's duration, for Retry-After.
        this.#avgMs = 0.8 * this.#avgMs + 0.2 * (performance.now() - start);
      }
    }) as Promise<T>;
  }

  stats(): HashPoolStats {
    return { started: this.#started, refused: this.#refused, running: this.#queue.pending, queued: this.#queue.size };
  }
}
