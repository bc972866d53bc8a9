/**
 * Where a capture job's time goes, for its "capture imported" log line: the wait from the job's
 * creation to its claim, then the time of each step as the ingester reports them (download,
 * inspect:opened, inspect:quick_check, inspect:tables, import, ...), and the record (from the
 * handler's end to the commit of "done"). Milliseconds; a step reported twice in a row counts once.
 */
export class StepTimer {
  readonly #steps = new Map<string, number>();
  #current: string | undefined;
  #since: number;

  constructor(
    private readonly createdAt: Date,
    private readonly claimedAt: number,
  ) {
    this.#since = performance.now();
  }

  /** Marks the start of `step` (ending the one before). */
  step(step: string): void {
    if (step === this.#current) return;
    this.#close();
    this.#current = step;
  }

  /** `queued_ms` (creation to claim), `run_ms` (claim to now) and `steps_ms` (each step, in order). */
  fields(): { queued_ms: number; run_ms: number; steps_ms: Record<string, number> } {
    this.#close();
    this.#current = undefined;
    const steps: Record<string, number> = {};
    for (const [k, v] of this.#steps) steps[k] = Math.round(v);
    return { queued_ms: Math.max(0, this.claimedAt - this.createdAt.getTime()), run_ms: Date.now() - this.claimedAt, steps_ms: steps };
  }

  #close(): void {
    const now = performance.now();
    if (this.#current !== undefined) this.#steps.set(this.#current, (this.#steps.get(this.#current) ?? 0) + now - this.#since);
    this.#since = now;
  }
}
