/**
 * How many exports of capture tables run at once (captures.export_max_concurrent on this node,
 * captures.export_max_per_user for one user). A request beyond either is refused before it opens the
 * store: 429 too_many_exports with Retry-After. A slot is held from the check until the export's
 * stream closes (finished, failed, or the client gone), and given back exactly once.
 */
import { Throttled } from '../../errors.ts';

export interface ExportLimits {
  total: number;
  perUser: number;
}

/** Seconds a refused client is told to wait: exports of ordinary tables end within seconds. */
const RETRY_AFTER_S = 5;

export class ExportSlots {
  #running = 0;
  readonly #byUser = new Map<string, number>();

  constructor(private readonly limits: ExportLimits) {}

  /** Exports running now (for metrics and tests). */
  get running(): number {
    return this.#running;
  }

  /** Takes a slot for `user`, or throws Throttled; the returned function gives it back (idempotent). */
  take(user: string): () => void {
    const mine = this.#byUser.get(user) ?? 0;
    if (mine >= this.limits.perUser) {
      throw new Throttled(`${mine} exports of yours are running (captures.export_max_per_user is ${this.limits.perUser}): retry when one has ended`, RETRY_AFTER_S, 'too_many_exports');
    }
    if (this.#running >= this.limits.total) {
      throw new Throttled(`${this.#running} exports are running (captures.export_max_concurrent is ${this.limits.total}): retry shortly`, RETRY_AFTER_S, 'too_many_exports');
    }
    this.#running += 1;
    this.#byUser.set(user, mine + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.#running -= 1;
      const left = (this.#byUser.get(user) ?? 1) - 1;
      if (left > 0) this.#byUser.set(user, left);
      else this.#byUser.delete(user);
    };
  }
}

/**
 * Bytes of large values (pages.ts LargeValue) all exports of this process hold at once: a value is
 * read whole once its share is free (one value larger than the whole budget runs alone), and its
 * share is given back once it has been sent or the export ended.
 */
export class LargeValueBudget {
  #used = 0;
  readonly #waiting: { bytes: number; grant: () => void }[] = [];

  constructor(readonly bytes: number) {}

  /** Resolves once `bytes` may be held; call the returned function (idempotent) to give them back. */
  async take(bytes: number): Promise<() => void> {
    // A waiter is counted by #wake when its turn comes.
    if (this.#waiting.length > 0 || !this.#fits(bytes)) await new Promise<void>((grant) => this.#waiting.push({ bytes, grant }));
    else this.#used += bytes;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.#used -= bytes;
      this.#wake();
    };
  }

  #fits(bytes: number): boolean {
    return this.#used === 0 || this.#used + bytes <= this.bytes;
  }

  #wake(): void {
    while (this.#waiting.length > 0 && this.#fits(this.#waiting[0]!.bytes)) {
      const next = this.#waiting.shift()!;
      this.#used += next.bytes;
      next.grant();
    }
  }
}
