/** Named locks within one process: work under a name runs after every earlier holder of that name is done. */
export class KeyLocks {
  readonly #locks = new Map<string, Promise<unknown>>();

  /** Runs `fn` after every earlier holder of the same lock name is done (in this process). */
  async run<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#locks.get(name) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.#locks.set(name, tail);
    try {
      return await run;
    } finally {
      if (this.#locks.get(name) === tail) this.#locks.delete(name);
    }
  }
}
