import type { Database } from '../../db/index.ts';
import type { Logger } from '../../log.ts';
import type { BackgroundTask } from '../background-task.ts';
import { appendAudit, type AuditEntry } from './log.ts';

/** One entry per key and minute. */
const MINUTE_MS = 60_000;
/** Keys kept per minute; past this, further keys are counted in one overflow entry. */
const MAX_KEYS = 10_000;
/** Client addresses named per entry. */
const MAX_CLIENTS = 5;

interface Count {
  entry: Omit<AuditEntry, 'details' | 'client'>;
  count: number;
  firstMs: number;
  lastMs: number;
  clients: Set<string>;
}

/**
 * Refusals that may come by the thousand (quota refusals: one rig looping on a refused
 * reservation) go to the audit log aggregated: note() counts per kind and subject (a rig id) in
 * memory, and once a minute (and on stop) each key becomes one entry with `count`, `first_at`,
 * `last_at` and up to five client addresses. The memory is bounded (MAX_KEYS per minute).
 */
export class AuditTally implements BackgroundTask {
  #counts = new Map<string, Count>();
  #overflow = 0;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Database,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one refusal of `kind` for `subject` (a rig id), from client. */
  note(entry: { kind: AuditEntry['kind']; subject: string; actor?: string | null; client?: string | null }): void {
    const key = `${entry.kind}\u0000${entry.subject}`;
    const at = this.now();
    let count = this.#counts.get(key);
    if (!count) {
      if (this.#counts.size >= MAX_KEYS) {
        this.#overflow++;
        return;
      }
      count = { entry: { kind: entry.kind, subject: entry.subject, actor: entry.actor ?? null }, count: 0, firstMs: at, lastMs: at, clients: new Set() };
      this.#counts.set(key, count);
    }
    count.count++;
    count.lastMs = at;
    if (entry.client && count.clients.size < MAX_CLIENTS) count.clients.add(entry.client);
  }

  /** Writes what was counted since the last flush: one entry per kind and subject. */
  flush(): Promise<void> {
    const counts = [...this.#counts.values()];
    const overflow = this.#overflow;
    this.#counts = new Map();
    this.#overflow = 0;
    const write = async () => {
      for (const c of counts) {
        const clients = [...c.clients];
        await appendAudit(this.db, {
          ...c.entry,
          client: clients[0] ?? null,
          atMs: c.lastMs,
          details: { count: c.count, first_at: new Date(c.firstMs).toISOString(), last_at: new Date(c.lastMs).toISOString(), clients },
        });
      }
      if (overflow > 0) await appendAudit(this.db, { kind: 'audit.overflow', actor: 'rigd', details: { refusals_not_itemised: overflow } });
    };
    // One flush after another; a failed one is said in the log and does not stop the next.
    this.#flushing = this.#flushing.then(write).catch((err) => this.log.warn('audit log: aggregated refusals could not be written', { error: String(err) }));
    return this.#flushing;
  }

  start(): void {
    this.#timer = setInterval(() => void this.flush(), MINUTE_MS);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }
}
