import pg from 'pg';
import { addConnectionPart, noteConnectionLost } from '../../connection-status.ts';
import { redactText } from '../../database-url.ts';

/** Waits between reconnection attempts after a dedicated connection broke: 0.5 s growing to 5 s. */
export const RETRY_MS = [500, 1000, 2000, 5000];

/**
 * One dedicated PostgreSQL connection that comes back by itself: after it breaks (server restart,
 * failover, network) it reconnects with a growing wait, and client() reconnects at once when asked
 * while it is down. Its status shows in /healthz under `part`.
 */
export class HealingClient {
  #client: pg.Client | undefined;
  #connecting: Promise<pg.Client> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #failures = 0;
  /** Why it is down, or null while connected (and before the first connection). */
  #down: string | null = null;
  #closed = false;
  readonly #remove: () => void;

  constructor(
    readonly part: string,
    private readonly make: () => pg.Client,
    private readonly onLost: (err: unknown) => void = () => {},
  ) {
    this.#remove = addConnectionPart({ part, status: () => this.status() });
  }

  /** 'ok', or why the connection is down. */
  status(): string {
    return this.#down === null ? 'ok' : `connection lost (${this.#down}); reconnecting`;
  }

  /** The connected client, connecting first when there is none; rejects with the connection's error. */
  client(): Promise<pg.Client> {
    if (this.#closed) return Promise.reject(new Error(`the ${this.part} connection is closed`));
    if (this.#client) return Promise.resolve(this.#client);
    this.#connecting ??= this.#connect().finally(() => (this.#connecting = undefined));
    return this.#connecting;
  }

  async #connect(): Promise<pg.Client> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const client = this.make();
    client.on('error', (err) => this.#drop(client, err));
    client.on('end', () => this.#drop(client, new Error('the connection ended')));
    try {
      await client.connect();
    } catch (err) {
      this.#drop(client, err);
      throw err;
    }
    if (this.#closed) {
      await client.end().catch(() => undefined);
      throw new Error(`the ${this.part} connection is closed`);
    }
    this.#client = client;
    this.#failures = 0;
    this.#down = null;
    return client;
  }

  #drop(client: pg.Client, err: unknown): void {
    if (this.#client === client) this.#client = undefined;
    client.removeAllListeners('end');
    client.removeAllListeners('error');
    client.on('error', () => {});
    client.end().catch(() => undefined);
    if (this.#closed) return;
    noteConnectionLost();
    const first = this.#down === null;
    this.#down = redactText(String((err as Error)?.message ?? err).split('\n')[0] ?? 'connection error');
    if (first) this.onLost(err);
    this.#retryLater();
  }

  #retryLater(): void {
    if (this.#timer || this.#closed) return;
    const wait = RETRY_MS[Math.min(this.#failures++, RETRY_MS.length - 1)]!;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.client().catch(() => undefined);
    }, wait);
    this.#timer.unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#remove();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#connecting?.catch(() => undefined);
    const client = this.#client;
    this.#client = undefined;
    if (!client) return;
    client.removeAllListeners('end');
    client.on('error', () => {});
    await client.end().catch(() => undefined);
  }
}
