import { Throttled } from '../errors.ts';

export interface ThrottleLimits {
  perLogin: number;
  perClient: number;
  windowMs: number;
}

/** Most keys remembered per dimension; the oldest are dropped past this (memory stays bounded). */
const MAX_KEYS = 10_000;

/**
 * Counts failed logins per login name and per client address in a sliding window.
 * Kept in memory: one rigd process serves the gateway, and a restart forgetting failures
 * only gives an attacker one more window.
 */
export class LoginThrottle {
  readonly #byLogin = new Map<string, number[]>();
  readonly #byClient = new Map<string, number[]>();

  constructor(
    private readonly limits: ThrottleLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Throws Throttled when either the login or the client has too many recent failures. */
  check(login: string, client: string): void {
    const t = this.now();
    const wait = Math.max(
      this.#wait(this.#byLogin, login.toLowerCase(), this.limits.perLogin, t),
      this.#wait(this.#byClient, client, this.limits.perClient, t),
    );
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      throw new Throttled(`too many failed logins; try again in ${seconds} s`, seconds);
    }
  }

  fail(login: string, client: string): void {
    const t = this.now();
    this.#push(this.#byLogin, login.toLowerCase(), t);
    this.#push(this.#byClient, client, t);
  }

  succeed(login: string): void {
    this.#byLogin.delete(login.toLowerCase());
  }

  #recent(map: Map<string, number[]>, key: string, t: number): number[] {
    const list = (map.get(key) ?? []).filter((at) => at > t - this.limits.windowMs);
    if (list.length) map.set(key, list);
    else map.delete(key);
    return list;
  }

  #wait(map: Map<string, number[]>, key: string, limit: number, t: number): number {
    const list = this.#recent(map, key, t);
    if (list.length < limit) return 0;
    return list[list.length - limit] + this.limits.windowMs - t;
  }

  #push(map: Map<string, number[]>, key: string, t: number): void {
    const list = this.#recent(map, key, t);
    list.push(t);
    map.delete(key);
    map.set(key, list);
    if (map.size > MAX_KEYS) map.delete(map.keys().next().value as string);
  }
}
