import type pg from 'pg';
import { addConnectionPart, noteConnectionLost } from '../../connection-status.ts';
import { redactText } from '../../database-url.ts';
import { RETRY_MS } from './healing-client.ts';

type Handler = () => void;

/**
 * LISTEN on one channel over a connection of its own (a pooled one could be handed to a query and
 * lose the LISTEN). Each notification calls every handler; so does every (re)connection, since
 * notifications sent while it was down are lost. After an error it reconnects with a growing wait.
 * /healthz shows it as `listen` from start() to close().
 */
export class PgListener {
  readonly #handlers = new Set<Handler>();
  #client: pg.Client | undefined;
  #timer: NodeJS.Timeout | undefined;
  #failures = 0;
  #closed = false;
  #connecting: Promise<void> | undefined;
  /** Why it is not listening, or null while listening (and before the first try). */
  #down: string | null = null;
  #removePart: (() => void) | undefined;

  constructor(
    /** A new client on the session URL (a pooler's transaction mode would lose the LISTEN). */
    private readonly make: () => pg.Client,
    private readonly channel: string,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  /** 'ok', or why it is not listening. */
  status(): string {
    return this.#down === null ? 'ok' : `not listening (${this.#down}); reconnecting, polling meanwhile`;
  }

  add(handler: Handler): void {
    this.#handlers.add(handler);
  }

  delete(handler: Handler): void {
    this.#handlers.delete(handler);
  }

  get size(): number {
    return this.#handlers.size;
  }

  /** Connected and listening now. */
  get listening(): boolean {
    return this.#client !== undefined;
  }

  /** Connects unless connected or waiting to retry (resolves after the attempt, whether it worked or a retry is scheduled). */
  start(): Promise<void> {
    this.#removePart ??= addConnectionPart({ part: 'listen', status: () => this.status() });
    if (this.#client || this.#timer) return Promise.resolve();
    this.#connecting ??= this.#connect().finally(() => (this.#connecting = undefined));
    return this.#connecting;
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    const client = this.make();
    client.on('notification', (msg) => {
      if (msg.channel === this.channel) this.#fire();
    });
    client.on('error', (err) => this.#lost(client, err));
    client.on('end', () => this.#lost(client, new Error('the LISTEN connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(this.channel)}`);
    } catch (err) {
      this.#lost(client, err);
      return;
    }
    if (this.#closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.#client = client;
    this.#failures = 0;
    this.#down = null;
    // Whatever was sent while not listening.
    this.#fire();
  }

  #lost(client: pg.Client, err: unknown): void {
    if (this.#client === client) this.#client = undefined;
    client.removeAllListeners('end');
    client.on('error', () => {});
    client.end().catch(() => undefined);
    if (this.#closed || this.#timer) return;
    noteConnectionLost();
    const first = this.#down === null;
    this.#down = redactText(String((err as Error)?.message ?? err).split('\n')[0] ?? 'connection error');
    // One log line per outage, not one per reconnection attempt.
    if (first) this.onError(err);
    const wait = RETRY_MS[Math.min(this.#failures++, RETRY_MS.length - 1)]!;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.start();
    }, wait);
    this.#timer.unref();
  }

  #fire(): void {
    for (const handler of this.#handlers) handler();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#removePart?.();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#connecting;
    const client = this.#client;
    this.#client = undefined;
    if (client) {
      client.removeAllListeners('end');
      client.on('error', () => {});
      await client.end().catch(() => undefined);
    }
  }
}
