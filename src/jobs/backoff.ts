export interface BackoffOptions {
  /**
   * Delay after the first failed attempt, in milliseconds; doubles with each attempt.
   * @default 5000
   */
  baseMs?: number;
  /**
   * Longest delay, in milliseconds (before jitter).
   * @default 600000
   */
  maxMs?: number;
  /**
   * Up to this fraction is added at random, so jobs that failed together do not retry together.
   * @default 0.1
   */
  jitter?: number;
}

/** Delay before the next attempt after `attempts` attempts have failed: base * 2^(attempts-1), capped, plus jitter. */
export function backoffMs(attempts: number, opts: BackoffOptions = {}, random: () => number = Math.random): number {
  const { baseMs = 5000, maxMs = 600_000, jitter = 0.1 } = opts;
  const exponent = Math.max(0, attempts - 1);
  const delay = Math.min(maxMs, baseMs * 2 ** Math.min(exponent, 30));
  return Math.round(delay * (1 + jitter * random()));
}
