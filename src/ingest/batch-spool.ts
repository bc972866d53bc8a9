/**
 * The spool file a capture import's batches travel through: an unnamed temporary file (created in
 * the temp directory, mode 0600, unlinked at once) whose descriptor the capture child inherits as
 * SPOOL_FD. The child writes each batch at offset 0 and says so on IPC; rigd reads it back into one
 * buffer it reuses. So receiving a batch allocates no new buffer on rigd's side (over IPC each batch
 * arrived as fresh buffers that stayed until V8's next major GC), and nothing is left on disk when
 * either process dies. One batch is in flight (the ack), so the file holds one batch.
 */
import { closeSync, mkdtempSync, openSync, read, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export class BatchSpool {
  #buf = Buffer.allocUnsafe(0);
  #closed = false;
  /** The read in progress: the descriptor is closed only after it (a read on a closed, reused number would read another file). */
  #reading: Promise<unknown> = Promise.resolve();

  private constructor(
    /** The descriptor, to hand the child. */
    readonly fd: number,
  ) {}

  static open(): BatchSpool {
    const dir = mkdtempSync(path.join(tmpdir(), 'rigd-import-'));
    try {
      const file = path.join(dir, 'batches');
      const fd = openSync(file, 'wx+', 0o600);
      unlinkSync(file);
      return new BatchSpool(fd);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /**
   * The `length` bytes the child wrote at offset 0, in the reused buffer (valid until the next read).
   * Refuses a length over `maxBytes` (the most the batch can take).
   */
  read(length: number, maxBytes: number): Promise<Buffer> {
    const reading = this.#read(length, maxBytes);
    this.#reading = reading.catch(() => undefined);
    return reading;
  }

  async #read(length: number, maxBytes: number): Promise<Buffer> {
    if (this.#closed) throw new Error('the import spool is closed');
    if (!Number.isSafeInteger(length) || length < 0 || length > maxBytes) {
      throw new Error(`capture child announced a batch of ${length} bytes (at most ${maxBytes})`);
    }
    // Grown with room to spare, so batches a little larger than the last do not each allocate.
    if (this.#buf.length < length) this.#buf = Buffer.allocUnsafe(Math.min(Math.max(length, Math.ceil(this.#buf.length * 1.5)), maxBytes));
    let at = 0;
    while (at < length) {
      const n = await new Promise<number>((resolve, reject) =>
        read(this.fd, this.#buf, at, length - at, at, (err, bytes) => (err ? reject(err) : resolve(bytes))),
      );
      if (n === 0) throw new Error(`capture child announced a batch of ${length} bytes, wrote ${at}`);
      at += n;
    }
    return this.#buf.subarray(0, length);
  }

  /** Closes the descriptor once the read in progress (if any) has ended. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#reading;
    closeSync(this.fd);
    this.#buf = Buffer.allocUnsafe(0);
  }
}
