import type pg from 'pg';

/**
 * A PostgreSQL session advisory lock held on a connection of its own: tryHold() takes it when free
 * (pg_try_advisory_lock, never waiting) or proves it is still held. The server frees it when the
 * connection ends, so a holder that dies (or loses the network) gives it up without doing anything.
 */
export class SessionLock {
  #client: pg.Client | undefined;
  #held = false;

  constructor(
    /** A new client on the session URL (never a transaction-mode pooler's: the lock would stay on a server connection others get). */
    private readonly make: () => pg.Client,
    private readonly key: bigint | number,
    /**
     * The server ends this session after it sat idle this long (idle_session_timeout, PostgreSQL 14
     * and later), freeing the lock: a holder that is frozen (SIGSTOP, a paused VM) keeps its socket
     * open and answers TCP keepalives, so only the server's clock can tell it stopped asking.
     * The holder must try at least this often. 0: never.
     */
    private readonly idleLimitMs = 0,
  ) {}

  get held(): boolean {
    return this.#held;
  }

  /** True when this connection holds the lock now (taken by this call or before). Throws when the server cannot be reached. */
  async tryHold(): Promise<boolean> {
    try {
      const client = await this.#connection();
      if (this.#held) {
        // Still our session: the lock is still ours.
        await client.query('SELECT 1');
        return true;
      }
      const { rows } = await client.query<{ held: boolean }>('SELECT pg_try_advisory_lock($1) AS held', [String(this.key)]);
      this.#held = rows[0]?.held === true;
      return this.#held;
    } catch (err) {
      this.#drop();
      throw err;
    }
  }

  async #connection(): Promise<pg.Client> {
    if (this.#client) return this.#client;
    const client = this.make();
    // A lost connection lost the lock with it: the next tryHold says so and connects again.
    client.on('error', () => this.#drop(client));
    client.on('end', () => this.#drop(client));
    this.#client = client;
    await client.connect();
    if (this.idleLimitMs > 0) {
      await client.query("SELECT set_config('idle_session_timeout', $1, false) WHERE current_setting('server_version_num')::int >= 140000", [String(Math.round(this.idleLimitMs))]);
    }
    return client;
  }

  #drop(client = this.#client): void {
    if (!client || client !== this.#client) return;
    this.#client = undefined;
    this.#held = false;
    client.removeAllListeners('end');
    client.on('error', () => {});
    client.end().catch(() => undefined);
  }

  /** Gives the lock up (ends the connection). */
  async release(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    this.#held = false;
    if (!client) return;
    client.removeAllListeners('end');
    client.on('error', () => {});
    await client.end().catch(() => undefined);
  }
}
