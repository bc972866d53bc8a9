import type { Database } from '../../db/index.ts';
import { saveBytesSeen } from '../../db/uploads.ts';

/**
 * Bytes received so far by uploads in flight. Readers in this process see every byte at once;
 * the database (for `rigd uploads` in another process) gets them at most once a second, all
 * dirty uploads in one write.
 */
export class UploadProgress {
  readonly #live = new Map<number, number>();
  readonly #dirty = new Set<number>();
  #timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Database,
    private readonly flushEveryMs = 1000,
  ) {}

  set(uploadId: number, bytes: number): void {
    this.#live.set(uploadId, bytes);
    this.#dirty.add(uploadId);
    this.#timer ??= setTimeout(() => void this.flush(), this.flushEveryMs);
  }

  /** Bytes seen by an upload in flight here, or undefined. */
  get(uploadId: number): number | undefined {
    return this.#live.get(uploadId);
  }

  isInFlight(uploadId: number): boolean {
    return this.#live.has(uploadId);
  }

  inFlight(): number[] {
    return [...this.#live.keys()];
  }

  /** The upload ended (stored or refused): forget it after writing its last figure. */
  async done(uploadId: number): Promise<void> {
    await this.flush();
    this.#live.delete(uploadId);
  }

  async flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#dirty.size === 0) return;
    const rows = [...this.#dirty].map((id) => [id, this.#live.get(id) ?? 0] as const);
    this.#dirty.clear();
    await saveBytesSeen(this.db, rows);
  }
}
