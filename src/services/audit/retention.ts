import { pruneAuditRows } from '../../db/audit.ts';
import type { Database } from '../../db/index.ts';
import type { Logger } from '../../log.ts';
import type { BackgroundTask } from '../background-task.ts';
import { canonicalJson, sealAudit } from './chain.ts';

const DAY_MS = 86_400_000;
/** First sweep after start, then one a day. */
const FIRST_MS = 60_000;
const EVERY_MS = DAY_MS;

/**
 * Removes audit entries older than audit.retention_days. The chain stays verifiable: the head row
 * keeps the last removed entry's seq and hash (the anchor the remaining chain starts from), and an
 * `audit.pruned` entry saying how many were removed, through which entry and its hash, is appended
 * in the same transaction. Returns how many entries were removed.
 */
export function pruneAudit(db: Database, retentionDays: number, nowMs = Date.now()): Promise<number> {
  return pruneAuditRows(db, nowMs - retentionDays * DAY_MS, sealAudit, (removed, through) => ({
    at_ms: nowMs,
    kind: 'audit.pruned',
    actor: 'rigd',
    client: null,
    subject: null,
    details: canonicalJson({ removed, retention_days: retentionDays, through_seq: through.seq, through_hash: through.hash }),
  }));
}

/** The daily sweep, a cluster duty (one node at a time). */
export class AuditRetention implements BackgroundTask {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = false;

  constructor(
    private readonly db: Database,
    private readonly retentionDays: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.#stopped = false;
    const tick = (ms: number) => {
      if (this.#stopped) return;
      this.#timer = setTimeout(() => {
        this.#running = pruneAudit(this.db, this.retentionDays)
          .then((removed) => removed > 0 && this.log.info('audit log retention', { removed, retention_days: this.retentionDays }))
          .catch((err) => this.log.warn('audit log retention failed', { error: String(err) }))
          .finally(() => tick(EVERY_MS));
      }, ms);
      this.#timer.unref();
    };
    tick(FIRST_MS);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }
}
