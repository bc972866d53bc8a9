import { DomainError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import type { ObjectStorage } from '../../storage/contract.ts';

const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 60_000;

/**
 * Makes sure the bucket exists. Storage may come up after rigd (MinIO still starting at boot):
 * rigd serves anyway, storage calls answer 503 meanwhile, and the check retries with backoff.
 */
export class BucketCheck {
  #timer: NodeJS.Timeout | null = null;
  #delay = FIRST_RETRY_MS;
  #ready = false;

  constructor(
    private readonly storage: ObjectStorage,
    private readonly log: Logger,
  ) {}

  get ready(): boolean {
    return this.#ready;
  }

  async start(): Promise<void> {
    await this.#attempt();
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  async #attempt(): Promise<void> {
    try {
      await this.storage.ensureBucket();
      if (this.#delay > FIRST_RETRY_MS) this.log.info('storage bucket ready', { bucket: this.storage.bucket });
      this.#ready = true;
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      this.log.warn('storage bucket check failed; retrying', { bucket: this.storage.bucket, error: err.message, retry_ms: this.#delay });
      this.#timer = setTimeout(() => void this.#attempt(), this.#delay);
      this.#delay = Math.min(this.#delay * 2, MAX_RETRY_MS);
    }
  }
}
