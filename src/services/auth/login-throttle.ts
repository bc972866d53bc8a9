import ipaddr from 'ipaddr.js';
import type { Database } from '../../db/index.ts';
import { forgetLogin, pruneAttempts, releaseAttempt, reserveAttempt, succeedAttempt, type AttemptLimits } from '../../db/login-attempts.ts';
import { Throttled } from '../../errors.ts';

export interface ThrottleLimits extends AttemptLimits {
  /** Longest delay an attempt on a login under attack waits before its password is checked. @default 5000 */
  maxDelayMs?: number;
}

/** The first delay, once a login has perLogin attempts in the window from all its clients; it doubles with each further one. */
const FIRST_DELAY_MS = 100;
const DEFAULT_MAX_DELAY_MS = 5000;

/**
 * How long an attempt waits before its password is checked, given the login's attempts in the
 * window from every client before it: nothing below perLogin, then 100 ms doubling with each
 * further attempt, up to maxDelayMs. A login under attack from many clients gets slower for
 * everyone, and is refused to no client that has not failed itself.
 */
export function loginDelayMs(loginCount: number, perLogin: number, maxDelayMs = DEFAULT_MAX_DELAY_MS): number {
  const excess = loginCount - perLogin;
  if (excess < 0) return 0;
  return Math.min(maxDelayMs, FIRST_DELAY_MS * 2 ** Math.min(excess, 30));
}

/** Prune attempts that left the window at most this often per process. */
const PRUNE_EVERY_MS = 60_000;
/** Most clients this process remembers as refused (the oldest are dropped past this). */
const MAX_REFUSED_CLIENTS = 10_000;

/**
 * One attempt, counted against its login and its client from the moment it was reserved, before
 * the password is hashed. Exactly one of the three ends it (later calls do nothing).
 */
export interface Reservation {
  /** How long to wait before checking the password (the login is under attack); 0 when not. */
  readonly delayMs: number;
  /** The password was wrong: the attempt stays counted as a failure. */
  fail(): Promise<void>;
  /** The password was right: this attempt is no failure, and the login's failures are forgotten. */
  succeed(): Promise<void>;
  /** No verdict (the hash pool was full, the database failed): the attempt is not counted. */
  release(): Promise<void>;
}

/**
 * Counts login attempts per (login key, client key) and per client key in a sliding window. An
 * attempt is reserved (counted) before its password is hashed, in one atomic step with the check,
 * so concurrent attempts cannot all pass a check made before any of them failed: at most `perLogin`
 * attempts per login from one client and `perClient` per client reach the hash per window. A login
 * with more attempts than `perLogin` from all its clients together is under attack: its attempts
 * are delayed (loginDelayMs), never refused to a client that has not failed. A right password
 * takes its attempt back; an operator's unlock (forget) clears a login's failures.
 * The attempts live in the database (src/db/login-attempts.ts): every rigd process on it, on any
 * host, shares one count per login and per client, and a restart forgets nothing.
 */
export class LoginThrottle {
  #lastPrune = -Infinity;
  /**
   * Clients a reservation found at their limit, and until when (this process's clock): the cheap
   * pre-check refuses them from memory, without the user lookup and the reservation. The database
   * stays the judge: a client at its limit through attempts on another node is refused by reserve().
   */
  readonly #refused = new Map<string, number>();

  /** now: the clock (ms); by default the database's (PostgreSQL: the server's, shared by every node). */
  constructor(
    private readonly db: Database,
    private readonly limits: ThrottleLimits,
    private readonly now?: () => number,
  ) {}

  /**
   * Throws Throttled when a reservation of this process found the client at its limit and its
   * wait is not over (cheap: memory only, reserves nothing; reserve() decides for the others).
   */
  checkClient(client: string): void {
    const until = this.#refused.get(client);
    if (until === undefined) return;
    const waitMs = until - this.#clock();
    if (waitMs > 0) refuse(waitMs);
    else this.#refused.delete(client);
  }

  /** Throws Throttled when the login or the client is at its limit; otherwise counts the attempt. */
  async reserve(login: string, client: string): Promise<Reservation> {
    const reserved = await reserveAttempt(this.db, login, client, this.limits, this.now?.());
    this.#prune(reserved.atMs);
    if ('waitMs' in reserved) {
      if (reserved.clientWaitMs > 0) this.#remember(client, reserved.clientWaitMs);
      refuse(reserved.waitMs);
    }
    const { id, loginCount } = reserved as { id: number; loginCount: number };
    let open = true;
    const end = (fn: () => Promise<void>) => async () => {
      if (!open) return;
      open = false;
      await fn();
    };
    return {
      delayMs: loginDelayMs(loginCount, this.limits.perLogin, this.limits.maxDelayMs),
      fail: end(async () => undefined),
      // Either gives the client a place back: the pre-check lets it through to reserve() again.
      succeed: end(() => succeedAttempt(this.db, id, login, client).finally(() => this.#refused.delete(client))),
      release: end(() => releaseAttempt(this.db, id).finally(() => this.#refused.delete(client))),
    };
  }

  /** Clears the failures of a login from every client (an operator's unlock); returns how many were cleared. */
  forget(login: string): Promise<number> {
    return forgetLogin(this.db, login);
  }

  #clock(): number {
    return this.now ? this.now() : Date.now();
  }

  #remember(client: string, waitMs: number): void {
    this.#refused.delete(client);
    this.#refused.set(client, this.#clock() + waitMs);
    if (this.#refused.size > MAX_REFUSED_CLIENTS) this.#refused.delete(this.#refused.keys().next().value as string);
  }

  /** Drops attempts that left the window (at most once a minute; a failure only leaves rows for the next time). */
  #prune(nowMs: number): void {
    if (nowMs - this.#lastPrune < PRUNE_EVERY_MS && nowMs >= this.#lastPrune) return;
    this.#lastPrune = nowMs;
    void pruneAttempts(this.db, nowMs - this.limits.windowMs).catch(() => undefined);
  }
}

function refuse(waitMs: number): void {
  if (waitMs <= 0) return;
  const seconds = Math.ceil(waitMs / 1000);
  throw new Throttled(`too many failed logins; try again in ${seconds} s`, seconds);
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
