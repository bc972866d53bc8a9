import { Counter, type Registry } from 'prom-client';
import { Throttled, Unauthenticated } from '../../errors.ts';

/** Failed and throttled logins. */
export class LoginMetrics {
  readonly #failures: Counter;
  readonly #throttled: Counter;

  constructor(registers: Registry[]) {
    this.#failures = new Counter({ name: 'rigd_login_failures_total', help: 'Logins refused for a wrong login or password.', registers });
    this.#throttled = new Counter({
      name: 'rigd_login_throttled_total',
      help: 'Login attempts refused by the throttle (too many recent failures), before any password check.',
      registers,
    });
  }

  /** Runs one login, counting it when it is refused; the outcome (result or error) is passed on unchanged. */
  async count<T>(login: () => Promise<T>): Promise<T> {
    try {
      return await login();
    } catch (err) {
      if (err instanceof Throttled) this.#throttled.inc();
      else if (err instanceof Unauthenticated) this.#failures.inc();
      throw err;
    }
  }
}
