import ipaddr from 'ipaddr.js';
import { Throttled } from '../../errors.ts';

export interface ThrottleLimits {
  perLogin: number;
  perClient: number;
  windowMs: number;
}

/** Most keys remembered per dimension; the oldest are dropped past this (memory stays bounded). */
const MAX_KEYS = 10_000;

/**
 * One attempt, counted against its login and its client from the moment it was reserved, before
 * the password is hashed. Exactly one of the three ends it.
 */
export interface Reservation {
  /** The password was wrong: the attempt stays counted as a failure. */
  fail(): void;
  /** The password was right: this attempt is no failure, and the login's failures are forgotten. */
  succeed(): void;
  /** No verdict (the hash pool was full, the database failed): the attempt is not counted. */
  release(): void;
}

/**
 * Counts login attempts per login key and per client key in a sliding window. An attempt is
 * reserved (counted) before its password is hashed, in one synchronous step with the check, so
 * concurrent attempts cannot all pass a check made before any of them failed: at most `perLogin`
 * attempts per login and `perClient` per client reach the hash per window. A right password
 * takes its attempt back.
 * Kept in memory: one rigd process serves the gateway, and a restart forgetting failures only
 * gives an attacker one more window.
 */
export class LoginThrottle {
  readonly #byLogin = new Map<string, number[]>();
  readonly #byClient = new Map<string, number[]>();

  constructor(
    private readonly limits: ThrottleLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Throws Throttled when the client is at its limit (cheap, reserves nothing). */
  checkClient(client: string): void {
    const t = this.now();
    this.#refuse(this.#wait(this.#byClient, client, this.limits.perClient, t));
  }

  /** Throws Throttled when the login or the client is at its limit; otherwise counts the attempt. */
  reserve(login: string, client: string): Reservation {
    const t = this.now();
    this.#refuse(
      Math.max(
        this.#wait(this.#byLogin, login, this.limits.perLogin, t),
        this.#wait(this.#byClient, client, this.limits.perClient, t),
      ),
    );
    this.#push(this.#byLogin, login, t);
    this.#push(this.#byClient, client, t);
    let open = true;
    const end = (fn: () => void) => () => {
      if (!open) return;
      open = false;
      fn();
    };
    return {
      fail: end(() => undefined),
      succeed: end(() => {
        this.#byLogin.delete(login);
        this.#take(this.#byClient, client, t);
      }),
      release: end(() => {
        this.#take(this.#byLogin, login, t);
        this.#take(this.#byClient, client, t);
      }),
    };
  }

  #refuse(waitMs: number): void {
    if (waitMs <= 0) return;
    const seconds = Math.ceil(waitMs / 1000);
    throw new Throttled(`too many failed logins; try again in ${seconds} s`, seconds);
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
    return Math.max(1, list[list.length - limit] + this.limits.windowMs - t);
  }

  #push(map: Map<string, number[]>, key: string, t: number): void {
    const list = this.#recent(map, key, t);
    list.push(t);
    map.delete(key);
    map.set(key, list);
    if (map.size > MAX_KEYS) map.delete(map.keys().next().value as string);
  }

  /** Takes one attempt made at `t` back (it may already have left the window). */
  #take(map: Map<string, number[]>, key: string, t: number): void {
    const list = map.get(key);
    const at = list?.lastIndexOf(t) ?? -1;
    if (!list || at < 0) return;
    list.splice(at, 1);
    if (!list.length) map.delete(key);
  }
}

/**
 * The throttle's key for a client address: IPv4 as is, IPv6 by its /64 (one host usually holds a
 * whole /64, so counting single addresses would give it billions of fresh keys).
 */
export function throttleClientKey(address: string): string {
  const addr = ipaddr.isValid(address) ? ipaddr.process(address) : null;
  if (!addr) return `peer:${address}`;
  if (addr.kind() === 'ipv4') return addr.toString();
  const parts = (addr as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}
