/**
 * Since when this node has been able to write the database without a break, as its heartbeats saw
 * it. While the database is unreachable (stopped, restarting, stalled) no node can heartbeat and no
 * rig report can be stored: the alerts sweep counts a node's and a rig's silence from the moment the
 * database took this node's writes again, not from before the outage (src/services/alerts).
 *
 * A break is a heartbeat that failed, or successful heartbeats further apart than BREAK_PERIODS
 * periods (a write that hung, or this process stalled). The return is the database's now, read after
 * the first heartbeat that succeeded after a break.
 */
export const BREAK_PERIODS = 2;

export class WritableSince {
  #broken = false;
  #since: Date | null = null;
  #lastWrite: number | null = null;

  constructor(
    private readonly periodMs: number,
    /** Now by the database's clock (the one the alerts compare with). */
    private readonly databaseNow: () => Promise<Date>,
  ) {}

  /** A heartbeat (or registration) could not write. */
  failed(): void {
    this.#broken = true;
  }

  /** A heartbeat (or registration) wrote; after a break, the return is read from the database. */
  async wrote(): Promise<void> {
    const at = performance.now();
    const gap = this.#lastWrite !== null && at - this.#lastWrite > BREAK_PERIODS * this.periodMs;
    this.#lastWrite = at;
    if (!this.#broken && !gap) return;
    try {
      this.#since = await this.databaseNow();
      this.#broken = false;
    } catch {
      this.#broken = true;
    }
  }

  /**
   * When this node's writes last came back after a break, by the database's clock; `now` while the
   * last write failed (nothing after the break is known yet); null when no break was seen.
   */
  at(now: Date): Date | null {
    return this.#broken ? now : this.#since;
  }
}
