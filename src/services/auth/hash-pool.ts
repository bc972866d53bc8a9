import PQueue from 'p-queue';
import { Throttled } from '../../errors.ts';

export interface HashPoolLimits {
  /** bcrypt operations running at once (each holds one libuv thread for its whole duration). */
  concurrency: number;
  /** Operations allowed to wait; past this, new ones are refused with 429 login_busy. */
  maxQueued: number;
  /**
   * Longest wait for a slot. An operation that would wait longer (by the queue and the measured
   * hash time), or that did, is refused with 429 login_busy instead: the client gets an answer
   * long before the server's 120 s socket timeout drops its connection, and no CPU goes to a
   * login whose client has likely given up.
   */
  maxWaitMs: number;
}

/** What the pool has done, for tests and metrics. */
export interface HashPoolStats {
  /** Operations that reached bcrypt (started), since the pool was made. */
  started: number;
  /** Operations refused because the queue was full or the wait too long. */
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
 * the file system. Excess operations wait in order; past `maxQueued` waiting, or `maxWaitMs` of
 * waiting, they are refused with Retry-After (an estimate of when the queue will have drained).
 */
export class HashPool {
  readonly #queue: PQueue;
  readonly #maxQueued: number;
  readonly #concurrency: number;
  readonly #maxWaitMs: number;
  #avgMs = FIRST_GUESS_MS;
  #started = 0;
  #refused = 0;

  constructor(limits: HashPoolLimits) {
    this.#concurrency = limits.concurrency;
    this.#maxQueued = limits.maxQueued;
    this.#maxWaitMs = limits.maxWaitMs;
    this.#queue = new PQueue({ concurrency: limits.concurrency });
  }

  /** Runs `work` when a slot is free; throws Throttled (login_busy) when it would wait too long. */
  run<T>(work: () => Promise<T>): Promise<T> {
    const queued = this.#queue.size;
    if (queued >= this.#maxQueued || (queued > 0 && this.#waitMs() > this.#maxWaitMs)) return Promise.reject(this.#busy());
    const enqueued = performance.now();
    return this.#queue.add(async () => {
      const start = performance.now();
      if (start - enqueued > this.#maxWaitMs) throw this.#busy();
      this.#started++;
      try {
        return await work();
      } finally {
        // Moving average of the operation's duration, for the wait estimate and Retry-After.
        this.#avgMs = 0.8 * this.#avgMs + 0.2 * (performance.now() - start);
      }
    }) as Promise<T>;
  }

  /** How long a new operation would wait for a slot, by the queue and the measured hash time. */
  #waitMs(): number {
    return ((this.#queue.size + this.#queue.pending) / this.#concurrency) * this.#avgMs;
  }

  #busy(): Throttled {
    this.#refused++;
    const waitS = Math.max(1, Math.ceil(this.#waitMs() / 1000));
    return new Throttled(`too many logins in progress; try again in ${waitS} s`, waitS, 'login_busy');
  }

  stats(): HashPoolStats {
    return { started: this.#started, refused: this.#refused, running: this.#queue.pending, queued: this.#queue.size };
  }
}
