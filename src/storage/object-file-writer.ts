/**
 * Writes one object file of the embedded store through a worker thread (object-file-worker.ts):
 * the event loop copies incoming bytes into a slab of a shared arena and hands the slab over; the
 * worker hashes it (SHA-256), writes it (O_DIRECT where the filesystem allows) and gives it back.
 * A large upload therefore costs the event loop one memory copy, and its memory is the arena:
 * when every slab is in flight, write() returns a promise and the caller stops reading its source.
 *
 * Workers are shared by the whole process (object-file-pool.ts).
 *
 * A file whose source goes quiet must not sit on a slab that another upload needs: when a writer
 * finds no free slab, every other writer holding a partly filled one parks it (the whole blocks go
 * to the worker, the last partial block, under DIRECT_ALIGN bytes, is copied aside until its file
 * has bytes again). So a stalled connection holds at most a few KiB of heap, never a slab, and
 * every write still starts at a block boundary (O_DIRECT keeps working).
 */
import { DIRECT_ALIGN, SLAB_BYTES, type FromWorker } from './object-file-protocol.ts';
import { pickWorker, type FileWorker, type SlabHolder } from './object-file-pool.ts';

/** What a finished file holds. */
export interface WrittenFile {
  size: number;
  /** Hex SHA-256 of the content. */
  sha256: string;
}

export class ObjectFileError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ObjectFileError';
  }
}

let nextId = 1;

export class ObjectFileWriter implements SlabHolder {
  #slab: number | null = null;
  #filled = 0;
  /** The last partial block of a parked slab, until the file has bytes again. */
  #tail: Uint8Array | null = null;
  #closed = false;

  private constructor(
    private readonly w: FileWorker,
    private readonly id: number,
    /** Whether the file was opened with O_DIRECT (the filesystem took it). */
    readonly direct: boolean,
  ) {}

  /** Creates `file` (which must not exist) and returns its writer. */
  static async create(file: string): Promise<ObjectFileWriter> {
    const w = pickWorker();
    const id = nextId++;
    w.begin();
    try {
      const reply = await w.request({ op: 'open', id, path: file });
      if (reply.op !== 'opened') throw replyError(reply);
      return new ObjectFileWriter(w, id, reply.direct);
    } catch (err) {
      w.end();
      throw err;
    }
  }

  /**
   * Copies `bytes` in. Returns undefined when they are all taken, or a promise that resolves once
   * they are (a slab had to come back from the worker first): await it before the next write.
   */
  write(bytes: Uint8Array): Promise<void> | undefined {
    if (this.#closed) return undefined;
    let offset = 0;
    while (offset < bytes.length) {
      if (this.#slab === null) {
        this.#slab = this.w.takeSlab(this);
        if (this.#slab === null) return this.#writeLater(bytes.subarray(offset));
        this.#filled = 0;
        if (this.#tail) {
          this.w.arena.set(this.#tail, this.#slab * SLAB_BYTES);
          this.#filled = this.#tail.length;
          this.#tail = null;
        }
      }
      const n = Math.min(bytes.length - offset, SLAB_BYTES - this.#filled);
      this.w.arena.set(bytes.subarray(offset, offset + n), this.#slab * SLAB_BYTES + this.#filled);
      this.#filled += n;
      offset += n;
      if (this.#filled === SLAB_BYTES) this.#hand();
    }
    return undefined;
  }

  async #writeLater(rest: Uint8Array): Promise<void> {
    await this.w.slabFreed();
    // Aborted meanwhile: the slab that woke this writer goes to the next one waiting.
    if (this.#closed) return this.w.passOn();
    await this.write(rest);
  }

  #hand(): void {
    if (this.#slab === null) return;
    if (this.#filled > 0) this.w.send({ op: 'write', id: this.id, slab: this.#slab, length: this.#filled });
    else this.w.returnSlab(this.#slab);
    this.w.released(this);
    this.#slab = null;
    this.#filled = 0;
  }

  /** Gives the slab back: its whole blocks are written, the rest is kept aside (see the top of this file). */
  park(): void {
    if (this.#slab === null) return;
    const slab = this.#slab;
    const whole = this.#filled - (this.#filled % DIRECT_ALIGN);
    const start = slab * SLAB_BYTES;
    this.#tail = whole < this.#filled ? this.w.arena.slice(start + whole, start + this.#filled) : null;
    this.#slab = null;
    this.#filled = 0;
    this.w.released(this);
    if (whole > 0) this.w.send({ op: 'write', id: this.id, slab, length: whole });
    else this.w.returnSlab(slab);
  }

  /** Writes what is left, truncates, fsyncs and closes the file. */
  async finish(): Promise<WrittenFile> {
    // Parked bytes go back into a slab first; the writer may be parked again while it waits for one,
    // so this repeats until they sit in a slab, which is then handed over in the same turn.
    while (this.#tail !== null && this.#slab === null) {
      const rest = this.#tail;
      this.#tail = null;
      await this.write(rest);
    }
    this.#hand();
    const reply = await this.#end('finish');
    if (reply.op !== 'done') throw replyError(reply);
    return { size: reply.size, sha256: reply.sha256 };
  }

  /** Stops, and removes the file. */
  async abort(): Promise<void> {
    if (this.#closed) return;
    if (this.#slab !== null) this.w.returnSlab(this.#slab);
    this.w.released(this);
    this.#slab = null;
    this.#tail = null;
    await this.#end('abort').catch(() => undefined);
  }

  async #end(op: 'finish' | 'abort'): Promise<FromWorker> {
    this.#closed = true;
    try {
      return await this.w.request({ op, id: this.id });
    } finally {
      this.w.end();
    }
  }
}

function replyError(reply: FromWorker): ObjectFileError {
  return reply.op === 'error' ? new ObjectFileError(reply.message, reply.code) : new ObjectFileError(`unexpected reply ${reply.op}`);
}
