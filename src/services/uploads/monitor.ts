import { databaseNow } from '../../db/clock.ts';
import type { Database } from '../../db/index.ts';
import { pruneExpiredBefore } from '../../db/upload-bounds.ts';
import type { Upload } from '../../db/models/upload.ts';
import { deferCheck, dueChecks, expireReservations, expireUploads, overdueReservations } from '../../db/uploads.ts';
import type { ObjectInfo } from '../../storage/contract.ts';
import type { Logger } from '../../log.ts';
import type { Storage } from '../../storage/index.ts';
import { writtenSince, type UploadService } from './service.ts';

const TICK_MS = 1000;
/** Reserved uploads looked at in storage per tick. */
const CHECKS_PER_TICK = 50;
const MAX_BACKOFF_MS = 60_000;
/** How often expired reservations are pruned, and how many rows one statement removes at most. */
const PRUNE_EVERY_MS = 60_000;
const PRUNE_BATCH = 1000;

/**
 * Follows reserved uploads until their object appears or their URL expires.
 * - Every driver: a reservation whose URL has expired (and whose PUT is not in flight) -> expired.
 * - MinIO: rigs PUT to MinIO directly, so storage is polled with per-upload backoff (1 s, 2 s, 4 s
 *   ... 60 s). MinIO's bucket notifications (the webhook) complete uploads sooner; polling never
 *   depends on them.
 * The embedded store completes uploads from its own PUT handler.
 * - Expired reservations older than uploads.keep_expired_days are removed (once a minute, in batches).
 * "Now" is the database's clock (PostgreSQL: the server's, which stored the reservations' times;
 * SQLite: this host's), read once per tick unless a caller gives it.
 */
export class UploadMonitor {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #storageDown = false;
  #prunedAt = 0;

  constructor(
    private readonly db: Database,
    private readonly storage: Storage,
    private readonly uploads: UploadService,
    private readonly log: Logger,
    private readonly tickMs = TICK_MS,
    /** uploads.keep_expired_days */
    private readonly keepExpiredDays = 7,
  ) {}

  start(): void {
    const loop = () => {
      this.#running = this.tick()
        .catch((err) => this.log.error('upload monitor failed', { error: String(err) }))
        .finally(() => {
          this.#running = null;
          if (this.#timer) this.#timer = setTimeout(loop, this.tickMs);
        });
    };
    this.#timer = setTimeout(loop, this.tickMs);
  }

  async stop(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running;
  }

  async tick(at?: Date): Promise<void> {
    const now = at ?? (await databaseNow(this.db));
    await this.expire(now);
    if (this.storage.driver !== 'embedded') await this.poll(now);
    if (now.getTime() - this.#prunedAt >= PRUNE_EVERY_MS) {
      this.#prunedAt = now.getTime();
      await this.prune(now);
    }
  }

  /** Removes expired reservations made more than keep_expired_days before `now`. Returns how many. */
  async prune(at?: Date): Promise<number> {
    const now = at ?? (await databaseNow(this.db));
    const before = new Date(now.getTime() - this.keepExpiredDays * 86_400_000);
    const total = await pruneExpiredBefore(this.db, before, PRUNE_BATCH);
    if (total > 0) this.log.info('expired upload reservations removed', { removed: total, keep_expired_days: this.keepExpiredDays });
    return total;
  }

  /**
   * Marks overdue reservations expired. Returns how many. The embedded store sees every PUT; with
   * MinIO rigd does not, so an overdue reservation first gets a last look in storage: its object,
   * PUT since the last backed-off check, completes it; storage not answering keeps it reserved
   * until storage can say (an acknowledged upload is never called expired unseen).
   */
  async expire(at?: Date): Promise<number> {
    const now = at ?? (await databaseNow(this.db));
    if (this.storage.driver === 'embedded') return expireReservations(this.db, now, this.uploads.progress.inFlight());
    const absent: number[] = [];
    for (const upload of await overdueReservations(this.db, now, CHECKS_PER_TICK)) {
      const info = await this.#look(upload);
      if (info === undefined) continue;
      const completed = info && this.#isItsObject(upload, info) ? await this.uploads.observe(upload.key, info) : [];
      if (!completed.some((u) => u.id === upload.id)) absent.push(upload.id);
    }
    return expireUploads(this.db, absent);
  }

  /** What storage holds at the upload's key: null for nothing, undefined when storage does not answer. */
  async #look(upload: Upload): Promise<ObjectInfo | null | undefined> {
    try {
      const info = await this.storage.stat(upload.key);
      if (this.#storageDown) this.log.info('storage answers again');
      this.#storageDown = false;
      return info;
    } catch (err) {
      if (!this.#storageDown) this.log.warn('storage unreachable; upload checks back off', { error: String(err) });
      this.#storageDown = true;
      return undefined;
    }
  }

  /** An object of the expected size written after the reservation: the one PUT through its URL. */
  #isItsObject(upload: Upload, info: ObjectInfo): boolean {
    return info.size === Number(upload.expected_size) && writtenSince(info, upload);
  }

  /** Looks in storage for reserved uploads that are due a check. */
  async poll(at?: Date): Promise<void> {
    const now = at ?? (await databaseNow(this.db));
    const due = await dueChecks(this.db, now, CHECKS_PER_TICK);
    for (const upload of due) {
      const info = await this.#look(upload);
      if (info && this.#isItsObject(upload, info)) {
        await this.uploads.observe(upload.key, info);
        continue;
      }
      const delay = Math.min(1000 * 2 ** upload.checks, MAX_BACKOFF_MS);
      await deferCheck(this.db, upload.id, upload.checks + 1, new Date(now.getTime() + delay));
    }
  }
}
