import PQueue from 'p-queue';
import type { Database } from '../db/index.ts';
import { backoffMs } from './backoff.ts';
import { DependencyDownError, errorCode, JobTimeoutError, LeaseLostError, PermanentJobError, RunnerStoppedError } from './errors.ts';
import type { JobInfo, JobProgress } from './job.ts';
import { listen } from '../db/notify.ts';
import { JOBS_CHANNEL, onJobEnqueued } from './wake-up.ts';
import { newLeaseOwner, releaseLeaseOwner } from './lease-owner.ts';
import { ProgressThrottle } from './progress.ts';
import { recordWhenBack, settleWithin } from './settle.ts';
import { connectionLostSince } from '../db/connection-status.ts';
import { FaultEpisodes, isDatabaseUnavailable } from '../db/faults.ts';
import { errorText, RunnerStore, type JobCommit, type Lease, type Outcome } from './store.ts';
import type { JobContext, JobHandler, RunnerLogger, RunnerOptions, RunOutcome, StopOptions, StopResult } from './runner-types.ts';

export type { JobCommit } from './store.ts';
export type { JobContext, JobHandler, RunnerLogger, RunnerOptions, RunOutcome, StopOptions, StopResult } from './runner-types.ts';

/** Longest wait between runs of a job while a dependency it needs is down (DependencyDownError). */
const DOWN_MAX_MS = 60_000;

const silent: RunnerLogger = { info() {}, warn() {}, error() {} };

interface Running {
  job: JobInfo;
  controller: AbortController;
}

/**
 * Runs durable jobs in this process: claims due jobs of the kinds it handles (one atomic UPDATE
 * and a lease each), runs at most `concurrency` at once on a p-queue, and records each outcome.
 * It never holds a write transaction while a handler runs.
 */
export class JobRunner {
  readonly #node: RunnerOptions['node'];
  #owner: string | undefined;
  readonly #store: RunnerStore;
  readonly #handlers = new Map<string, JobHandler<never>>();
  readonly #queue: PQueue;
  readonly #running = new Map<number, Running>();
  readonly #opts: Required<Omit<RunnerOptions, 'backoff' | 'logger' | 'onOutcome' | 'node'>> & Pick<RunnerOptions, 'backoff' | 'onOutcome'>;
  readonly #log: RunnerLogger;
  #state: 'new' | 'started' | 'stopping' | 'stopped' = 'new';
  #poll: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  #unlisten: (() => Promise<void>) | undefined;
  readonly #db: Database;
  #pumping: Promise<void> | undefined;
  #pumpAgain = false;
  #ticking = false;
  #stopping: Promise<StopResult> | undefined;
  /** Aborted when the runner stops without draining: outcomes still waiting for the database are given up (their leases run out). */
  readonly #giveUp = new AbortController();
  /** The database gone: one log line per outage, not one per poll. */
  readonly #outages = new FaultEpisodes();
  /** Runs in a row of each job that a dependency's outage ended (DependencyDownError): the backoff's exponent. */
  readonly #downRuns = new Map<number, number>();

  constructor(db: Database, opts: RunnerOptions = {}) {
    this.#db = db;
    this.#node = opts.node;
    this.#store = new RunnerStore(db);
    this.#opts = {
      concurrency: opts.concurrency ?? 2,
      jobTimeoutMs: opts.jobTimeoutMs ?? 600_000,
      pollMs: opts.pollMs ?? 1000,
      leaseMs: opts.leaseMs ?? 30_000,
      progressIntervalMs: opts.progressIntervalMs ?? 500,
      abortGraceMs: opts.abortGraceMs ?? 5000,
      nodeStaleMs: opts.nodeStaleMs ?? 15_000,
      backoff: opts.backoff,
      onOutcome: opts.onOutcome,
    };
    this.#log = opts.logger ?? silent;
    this.#queue = new PQueue({ concurrency: this.#opts.concurrency });
  }

  /** This runner's lease owner id (made when first asked, at the latest by start(): the node's name may be known only then). */
  get owner(): string {
    const node = this.#node;
    this.#owner ??= newLeaseOwner(typeof node === 'function' ? node() : node);
    return this.#owner;
  }

  /** Registers the handler of one kind of job (before start). */
  handle<P>(kind: string, handler: JobHandler<P>): this {
    if (this.#state !== 'new') throw new Error('register handlers before start()');
    this.#handlers.set(kind, handler as JobHandler<never>);
    return this;
  }

  /** Jobs running now. */
  get active(): number {
    return this.#running.size;
  }

  /** Reclaims jobs left running by dead processes, then starts claiming. */
  async start(): Promise<void> {
    if (this.#state !== 'new') throw new Error('runner already started');
    this.#state = 'started';
    this.#unsubscribe = onJobEnqueued(() => this.wake());
    this.#unlisten = await listen(this.#db, JOBS_CHANNEL, () => this.wake(), (err) =>
      this.#log.warn('listening for jobs of other processes failed; reconnecting (polling meanwhile)', { error: errorText(err) }),
    );
    await this.#tick();
    if (this.#state === 'started') this.#poll = setInterval(() => void this.#tick(), this.#opts.pollMs);
  }

  /** Looks for due jobs now (called on every enqueue heard of). */
  wake(): void {
    if (this.#state === 'started') void this.#pump();
  }

  async #tick(): Promise<void> {
    if (this.#ticking || this.#state !== 'started') return;
    this.#ticking = true;
    try {
      const n = await this.#store.reclaimStale(this.owner, this.#opts.nodeStaleMs, [...this.#handlers.keys()]);
      if (n > 0) this.#log.warn('reclaimed jobs from a dead or stalled runner', { count: n });
      await this.#pump();
    } catch (err) {
      this.#fault('job poll failed', err);
    } finally {
      this.#ticking = false;
    }
  }

  /** Claims jobs while a slot is free; one pump at a time, re-run if woken meanwhile. */
  #pump(): Promise<void> {
    if (this.#pumping) {
      this.#pumpAgain = true;
      return this.#pumping;
    }
    this.#pumping = (async () => {
      const kinds = [...this.#handlers.keys()];
      do {
        this.#pumpAgain = false;
        while (this.#state === 'started' && this.#running.size < this.#opts.concurrency) {
          if (!(await this.#store.hasClaimable(kinds))) break;
          const job = await this.#store.claim(kinds, this.owner, this.#opts.leaseMs);
          if (!job) continue; // another runner took it first
          this.#launch(job);
        }
      } while (this.#pumpAgain && this.#state === 'started');
    })()
      .catch((err) => this.#fault('claiming a job failed', err))
      .finally(() => {
        this.#pumping = undefined;
      });
    return this.#pumping;
  }

  #launch(job: JobInfo): void {
    const entry: Running = { job, controller: new AbortController() };
    this.#running.set(job.id, entry);
    this.#queue
      .add(() => this.#execute(entry))
      .catch((err) => this.#log.error('recording a job outcome failed', { id: job.id, error: errorText(err) }))
      .finally(() => {
        this.#running.delete(job.id);
        this.wake();
      });
  }

  async #execute({ job, controller }: Running): Promise<void> {
    const handler = this.#handlers.get(job.kind);
    const lease: Lease = { id: job.id, owner: this.owner, attempts: job.attempts };
    const { leaseMs, jobTimeoutMs, progressIntervalMs, abortGraceMs } = this.#opts;
    const started = process.hrtime.bigint();
    const startedAt = Date.now();
    const progress = new ProgressThrottle((p) => this.#store.saveProgress(lease, p), progressIntervalMs, (err) =>
      this.#log.warn('saving job progress failed', { id: job.id, error: errorText(err) }),
    );
    let finished = false;
    const timeout = setTimeout(() => controller.abort(new JobTimeoutError(jobTimeoutMs)), jobTimeoutMs);
    const renewal = setInterval(() => {
      this.#store.renew(lease, leaseMs).then(
        (ours) => {
          if (!ours && !finished) controller.abort(new LeaseLostError());
        },
        (err) => this.#fault('renewing a job lease failed', err, { id: job.id }),
      );
    }, Math.max(1, Math.floor(leaseMs / 3)));

    let error: unknown;
    let ok = false;
    let commit: JobCommit | undefined;
    try {
      if (!handler) throw new PermanentJobError(`no handler for job kind "${job.kind}"`, 'no_handler');
      const ctx: JobContext = { signal: controller.signal, progress: (p) => progress.report(p), lease };
      const result = await settleWithin(Promise.resolve().then(() => handler(job as JobInfo<never>, ctx)), controller.signal, abortGraceMs);
      if (typeof result === 'function') commit = result;
      ok = true;
    } catch (err) {
      error = err;
    } finally {
      finished = true;
      clearTimeout(timeout);
      clearInterval(renewal);
    }
    const last = await progress.stop();
    const reason: unknown = controller.signal.aborted ? controller.signal.reason : undefined;

    let outcome: Outcome | undefined;
    if (ok) {
      try {
        outcome = await this.#record(job, () => this.#store.complete(lease, last, commit));
      } catch (err) {
        // The handler's commit threw: nothing of it nor "done" was written; a failure like any other.
        ok = false;
        error = err;
      }
    }
    if (outcome === undefined) {
      // A run the database's going away broke (its error says so, or a connection of this process broke meanwhile) is tried again without using up an attempt.
      const lostDatabase = !(error instanceof PermanentJobError) && (isDatabaseUnavailable(error) || connectionLostSince(startedAt));
      outcome = await this.#record(job, () => this.#failed(job, lease, reason, error, last, lostDatabase));
    }
    const run: RunOutcome = outcome === 'queued' ? (reason instanceof RunnerStoppedError ? 'released' : 'retry') : outcome;
    this.#opts.onOutcome?.(job.kind, run, Number(process.hrtime.bigint() - started) / 1e9);
    const fields = { id: job.id, kind: job.kind, attempt: lease.attempts, ...(ok ? {} : { error: errorText(reason ?? error) }) };
    if (outcome === 'done') this.#downRuns.delete(job.id);
    if (outcome === 'done') this.#log.info('job done', fields);
    else this.#log.warn(`job ${outcome}`, fields);
  }

  /** Records a run that did not end done: lost, released, failed for good, or queued again after backoff. */
  async #failed(job: JobInfo, lease: Lease, reason: unknown, error: unknown, last: JobProgress | undefined, lostDatabase = false): Promise<Outcome> {
    const downRuns = (this.#downRuns.get(job.id) ?? 0) + 1;
    this.#downRuns.delete(job.id);
    if (reason instanceof LeaseLostError) return 'lost';
    if (reason instanceof RunnerStoppedError) return this.#store.release(lease, last);
    if (error instanceof DependencyDownError && reason === undefined) {
      this.#downRuns.set(job.id, downRuns);
      const delay = backoffMs(downRuns, { ...this.#opts.backoff, maxMs: Math.min(this.#opts.backoff?.maxMs ?? DOWN_MAX_MS, DOWN_MAX_MS) });
      return this.#store.retryUncounted(lease, { message: errorText(error), code: error.code }, delay, last);
    }
    if (error instanceof PermanentJobError) return this.#store.fail(lease, { message: errorText(error), code: error.code }, last);
    const cause = reason instanceof JobTimeoutError ? reason : error;
    const delay = backoffMs(lease.attempts, this.#opts.backoff);
    // The handler's code wins (it knows what was timed out), else the cause's own.
    const failure = { message: errorText(cause), code: errorCode(error) ?? errorCode(cause) };
    if (lostDatabase && !(reason instanceof JobTimeoutError)) {
      return this.#store.retryUncounted(lease, { ...failure, code: failure.code ?? 'database_unavailable' }, Math.min(delay, 1000), last);
    }
    return this.#store.retryOrFail(lease, job.maxAttempts, failure, delay, last);
  }

  /** Records an outcome, waiting for the database while it is unavailable (until the runner stops without draining). */
  #record(job: JobInfo, write: () => Promise<Outcome>): Promise<Outcome> {
    return recordWhenBack(write, this.#giveUp.signal, (err) =>
      this.#log.warn('the database is unavailable: the job\'s outcome is recorded once it is back', { id: job.id, error: errorText(err) }),
    );
  }

  /** Logs a failure of the runner's own statements: the database gone once per outage, anything else every time. */
  #fault(what: string, err: unknown, fields: Record<string, unknown> = {}): void {
    if (!isDatabaseUnavailable(err)) return this.#log.error(what, { ...fields, error: errorText(err) });
    if (this.#outages.begins('database')) this.#log.warn(`${what}: the database is unavailable; trying again until it is back`, { ...fields, error: errorText(err) });
  }

  /**
   * Stops claiming, lets running jobs finish within timeoutMs, then aborts the rest through their
   * signal and gives them back to the queue (claimable at once by the next runner).
   */
  stop(opts: StopOptions = {}): Promise<StopResult> {
    this.#stopping ??= this.#stop(opts.timeoutMs ?? 30_000);
    return this.#stopping;
  }

  async #stop(timeoutMs: number): Promise<StopResult> {
    this.#state = 'stopping';
    clearInterval(this.#poll);
    this.#unsubscribe?.();
    await this.#unlisten?.();
    await this.#pumping;
    let timer: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      this.#queue.onIdle().then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    const released: number[] = [];
    if (!drained) {
      this.#giveUp.abort();
      for (const { job, controller } of this.#running.values()) {
        released.push(job.id);
        controller.abort(new RunnerStoppedError());
      }
      await this.#queue.onIdle();
    }
    this.#state = 'stopped';
    releaseLeaseOwner(this.owner);
    return { drained, released };
  }
}
