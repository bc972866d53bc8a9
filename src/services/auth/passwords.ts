import { InvalidInput } from '../../errors.ts';
import { HashPool, type HashPoolLimits, type HashPoolStats } from './hash-pool.ts';

/** bcrypt reads at most 72 bytes; a longer password would be silently cut, so it is refused. */
export const MAX_PASSWORD_BYTES = 72;
export const MIN_PASSWORD_CHARS = 8;

export function checkPasswordRules(password: string): void {
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) {
    throw new InvalidInput(`password is longer than ${MAX_PASSWORD_BYTES} bytes (bcrypt would ignore the rest)`, [
      { field: 'password', message: `at most ${MAX_PASSWORD_BYTES} bytes` },
    ], 'password_too_long');
  }
  if ([...password].length < MIN_PASSWORD_CHARS) {
    throw new InvalidInput(`password must be at least ${MIN_PASSWORD_CHARS} characters`, [
      { field: 'password', message: `at least ${MIN_PASSWORD_CHARS} characters` },
    ], 'password_too_short');
  }
}

/** bcrypt (a native addon) loads on first use: listing users never hashes. */
let bcryptModule: Promise<typeof import('bcrypt')> | undefined;
async function bcrypt(): Promise<typeof import('bcrypt')> {
  bcryptModule ??= import('bcrypt').then((m) => m.default ?? m);
  return bcryptModule;
}

/** As the config's defaults; a wait is bounded well inside the server's 120 s socket timeout. */
const DEFAULT_LIMITS: HashPoolLimits = { concurrency: 2, maxQueued: 200, maxWaitMs: 60_000 };

export class Passwords {
  readonly #cost: number;
  readonly #pool: HashPool;
  #dummy: Promise<string> | null = null;

  constructor(cost: number, limits: Partial<HashPoolLimits> = {}) {
    this.#cost = cost;
    this.#pool = new HashPool({ ...DEFAULT_LIMITS, ...limits });
  }

  async hash(password: string): Promise<string> {
    checkPasswordRules(password);
    const b = await bcrypt();
    return this.#pool.run(() => b.hash(password, this.#cost));
  }

  /** Compares in bcrypt's constant time; a password over 72 bytes never matches. */
  async verify(password: string, hash: string): Promise<boolean> {
    if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) return this.burn().then(() => false);
    const b = await bcrypt();
    return this.#pool.run(() => b.compare(password, hash));
  }

  /** Spends the time of one verification, so an unknown user looks like a wrong password. */
  async burn(): Promise<void> {
    const b = await bcrypt();
    // Made once, in its own turn on the pool (a task waiting on another task could hold every slot).
    this.#dummy ??= this.#pool.run(() => b.hash('rigd-timing-equaliser', this.#cost));
    const dummy = await this.#dummy.catch((err: unknown) => {
      this.#dummy = null;
      throw err;
    });
    await this.#pool.run(() => b.compare('not-the-password', dummy));
  }

  /** bcrypt operations started, refused, running and waiting (the pool's counters). */
  stats(): HashPoolStats {
    return this.#pool.stats();
  }
}
