import type { JobProgress } from './job.ts';

/**
 * Throttles a handler's progress reports to at most one write per interval; the latest value
 * always wins, and the last one is handed back by stop() to be written with the job's outcome.
 */
export class ProgressThrottle {
  #latest: JobProgress | undefined;
  #dirty = false;
  #lastWrite = 0;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> | undefined;
  #stopped = false;

  constructor(
    private readonly write: (progress: JobProgress) => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  report(progress: JobProgress): void {
    if (this.#stopped) return;
    this.#latest = { ...progress };
    this.#dirty = true;
    this.#schedule();
  }

  #schedule(): void {
    if (this.#stopped || this.#timer || this.#writing || !this.#dirty) return;
    const wait = Math.max(0, this.#lastWrite + this.intervalMs - Date.now());
    this.#timer = setTimeout(() => this.#flush(), wait);
  }

  #flush(): void {
    this.#timer = undefined;
    if (this.#stopped || !this.#dirty || this.#latest === undefined) return;
    this.#dirty = false;
    this.#lastWrite = Date.now();
    this.#writing = this.write(this.#latest)
      .then(() => undefined, this.onError)
      .finally(() => {
        this.#writing = undefined;
        this.#schedule();
      });
  }

  /** Stops writing; resolves with the latest report (if any) once no write is in flight. */
  async stop(): Promise<JobProgress | undefined> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#writing;
    return this.#latest;
  }
}
