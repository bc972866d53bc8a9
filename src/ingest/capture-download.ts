/**
 * Copies one stored object to a local file through the storage driver: streamed (memory stays
 * flat), hashed on the way (SHA-256 for the record), stopped as soon as it is longer than the cap,
 * paced when a read rate is set, and abortable. The caller owns the file and removes it.
 *
 * No MD5 against MinIO's etag: one GET returns one version on both drivers (the embedded store
 * reads from an open file that a later PUT never changes), the caller compares the etag from stat,
 * and MD5 would halve the copy rate on a small gateway CPU. (The embedded store's etag is itself
 * the content's SHA-256.)
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** The object is longer than the cap: refused, whatever storage said its size was. */
export class ObjectTooLarge extends Error {
  override name = 'ObjectTooLarge';
  constructor(readonly maxBytes: number) {
    super(`Capture is larger than the limit of ${maxBytes} bytes (reading stopped there).`);
  }
}

export interface DownloadOptions {
  maxBytes: number;
  /** Bytes per second at most; 0 = no limit. */
  bytesPerSecond?: number;
  signal?: AbortSignal;
  /** Called with the bytes copied so far (often: throttle on the receiving side). */
  onBytes?: (bytes: number) => void;
}

export interface Downloaded {
  bytes: number;
  sha256: string;
}

class Meter extends Transform {
  bytes = 0;
  readonly #sha = createHash('sha256');
  readonly #started = Date.now();

  constructor(private readonly opts: DownloadOptions) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.opts.maxBytes) {
      done(new ObjectTooLarge(this.opts.maxBytes));
      return;
    }
    this.#sha.update(chunk);
    this.opts.onBytes?.(this.bytes);
    const rate = this.opts.bytesPerSecond ?? 0;
    const ahead = rate > 0 ? (this.bytes / rate) * 1000 - (Date.now() - this.#started) : 0;
    if (ahead > 1) {
      sleep(ahead, undefined, { signal: this.opts.signal }).then(
        () => done(null, chunk),
        (err: unknown) => done(err as Error),
      );
    } else {
      done(null, chunk);
    }
  }

  sha256(): string {
    return this.#sha.digest('hex');
  }
}

/** Streams `source` into `file` (created, must not exist). Rejects with ObjectTooLarge past the cap. */
export async function downloadTo(source: Readable, file: string, opts: DownloadOptions): Promise<Downloaded> {
  const meter = new Meter(opts);
  try {
    await pipeline(source, meter, createWriteStream(file, { flags: 'wx', mode: 0o600, highWaterMark: 1024 * 1024 }), { signal: opts.signal });
  } catch (err) {
    if (!source.destroyed) source.destroy();
    throw err;
  }
  return { bytes: meter.bytes, sha256: meter.sha256() };
}

/**
 * Reads a local file once from start to end in large pieces into one reused buffer, hashing it
 * (SHA-256): for a version read in place (a hard link into the embedded store), so its hash is
 * computed, not taken on trust, and its pages are in the page cache, read sequentially, before SQLite
 * walks its b-trees (quick_check reads pages in tree order: on a file the store wrote past the page
 * cache, a random read). Paced and abortable like downloadTo; nothing is allocated per piece.
 */
export async function readThrough(file: string, opts: DownloadOptions): Promise<Downloaded> {
  const sha = createHash('sha256');
  const buf = Buffer.allocUnsafe(READ_THROUGH_BYTES);
  const started = Date.now();
  const fh = await open(file, 'r');
  let bytes = 0;
  try {
    for (;;) {
      opts.signal?.throwIfAborted();
      const { bytesRead } = await fh.read(buf, 0, buf.length, bytes);
      if (bytesRead === 0) break;
      bytes += bytesRead;
      if (bytes > opts.maxBytes) throw new ObjectTooLarge(opts.maxBytes);
      sha.update(buf.subarray(0, bytesRead));
      opts.onBytes?.(bytes);
      const rate = opts.bytesPerSecond ?? 0;
      const ahead = rate > 0 ? (bytes / rate) * 1000 - (Date.now() - started) : 0;
      if (ahead > 1) await sleep(ahead, undefined, { signal: opts.signal });
    }
  } finally {
    await fh.close();
  }
  return { bytes, sha256: sha.digest('hex') };
}

/** The piece readThrough reads at once. */
const READ_THROUGH_BYTES = 1024 * 1024;
