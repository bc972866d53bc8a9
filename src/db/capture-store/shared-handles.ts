// Store connections that many exports share (pages.ts, pg-pages.ts): a connection per export would
// cost hundreds of descriptors or database connections under load.

/** Store connections all exports share, per store (SQLite: serialized, so each takes one of libuv's threads at most). */
export const SHARED_CONNECTIONS = 2;

/**
 * A few connections that many exports share, opened on first use and closed as soon as no export
 * uses them (an export releases its share when it ends, fails or its client goes away).
 */
export class SharedHandles<T> {
  readonly #list: { handle: Promise<T>; users: number }[] = [];

  constructor(
    private readonly open: () => Promise<T>,
    private readonly end: (handle: T) => Promise<void>,
    private readonly max = SHARED_CONNECTIONS,
  ) {}

  /** A share of the least used connection (a new one while fewer than max are open). */
  async acquire(): Promise<{ handle: T; release: () => Promise<void> }> {
    if (this.#list.length < this.max) this.#list.push({ handle: this.open(), users: 0 });
    const entry = this.#list.reduce((a, b) => (b.users < a.users ? b : a));
    entry.users += 1;
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      entry.users -= 1;
      if (entry.users > 0) return;
      const at = this.#list.indexOf(entry);
      if (at >= 0) this.#list.splice(at, 1);
      await entry.handle.then((h) => this.end(h)).catch(() => undefined);
    };
    try {
      return { handle: await entry.handle, release };
    } catch (err) {
      await release();
      throw err;
    }
  }
}

