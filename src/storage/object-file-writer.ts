/**
 * Writes one object file of the embedded store through a worker thread (object-file-worker.ts):
 * the event loop copies incoming bytes into a slab of a shared arena and hands the slab over; the
 * worker hashes it (SHA-256), writes it (O_DIRECT where the filesystem allows) and gives it back.
 * A large upload therefore costs the event loop one memory copy, and its memory is the arena:
 * when every slab is in flight, write() returns a promise and the caller stops reading its source.
 *
 * Workers are shared by the whole process: up to one per core (at most 4), each serving any number
 * of files, started on demand and stopped after a while without work.
 */
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { SLAB_BYTES, SLABS_PER_WORKER, type FromWorker, type ToWorker, type WorkerSetup } from './object-file-protocol.ts';

// Node has WebAssembly; the compiler's libraries here do not describe it.
declare const WebAssembly: { Memory: new (d: { initial: number; maximum: number; shared: true }) => { buffer: SharedArrayBuffer } };

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

/** A worker stops after this long without a file in progress. */
const IDLE_MS = 30_000;
const MAX_WORKERS = Math.max(1, Math.min(4, availableParallelism()));
const SOURCE_EXT = path.extname(fileURLToPath(import.meta.url));
const WORKER_FILE = new URL(`./object-file-worker${SOURCE_EXT}`, import.meta.url);

function startWorker(options: WorkerOptions): Worker {
  if (SOURCE_EXT !== '.ts') return new Worker(WORKER_FILE, options);
  // Running from the TypeScript sources (tests, benchmarks): the worker loads them through tsx too.
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(WORKER_FILE.href)}); })`;
  return new Worker(boot, { ...options, eval: true });
}

interface Pending {
  resolve: (value: FromWorker) => void;
  reject: (err: Error) => void;
}

class FileWorker {
  readonly worker: Worker;
  readonly arena: Uint8Array;
  readonly #free: number[] = [];
  readonly #slabWaiters: Array<() => void> = [];
  readonly #replies = new Map<number, Pending>();
  #files = 0;
  #idle: NodeJS.Timeout | null = null;
  #dead: Error | null = null;

  constructor(private readonly onExit: (w: FileWorker) => void) {
    // WebAssembly memory is page-aligned, which O_DIRECT needs; an ArrayBuffer's memory is not.
    const pages = (SLAB_BYTES * SLABS_PER_WORKER) / 65536;
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
    this.arena = new Uint8Array(memory.buffer);
    for (let i = SLABS_PER_WORKER - 1; i >= 0; i--) this.#free.push(i);
    const setup: WorkerSetup = { arena: memory.buffer };
    // The worker needs none of this process's Node options (some, like --input-type, would stop it).
    // Its own heap holds a few small objects per slab: a small young generation keeps it small.
    this.worker = startWorker({
      workerData: setup,
      name: 'rigd object files',
      execArgv: [],
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
    });
    this.worker.unref();
    this.worker.on('message', (m: FromWorker) => this.#onMessage(m));
    this.worker.on('error', (err) => this.#die(err));
    this.worker.on('exit', (code) => this.#die(new Error(`object file worker exited (${code})`)));
  }

  get files(): number {
    return this.#files;
  }

  #onMessage(m: FromWorker): void {
    if (m.op === 'free') {
      this.#free.push(m.slab);
      this.#slabWaiters.shift()?.();
      return;
    }
    const pending = this.#replies.get(m.id);
    this.#replies.delete(m.id);
    pending?.resolve(m);
  }

  /** Leaves the pool at once (no new file can pick it while it stops), then stops. */
  #retire(): void {
    this.#die(new Error('object file worker stopped after being idle'));
    void this.worker.terminate();
  }

  #die(err: Error): void {
    if (this.#dead) return;
    this.#dead = err;
    if (this.#idle) clearTimeout(this.#idle);
    for (const p of this.#replies.values()) p.reject(err);
    this.#replies.clear();
    for (const wake of this.#slabWaiters.splice(0)) wake();
    this.onExit(this);
  }

  /** Sends `message` and resolves with the worker's reply to the same file. */
  request(message: ToWorker): Promise<FromWorker> {
    if (this.#dead) return Promise.reject(this.#dead);
    return new Promise((resolve, reject) => {
      this.#replies.set(message.id, { resolve, reject });
      this.worker.postMessage(message);
    });
  }

  send(message: ToWorker): void {
    if (!this.#dead) this.worker.postMessage(message);
  }

  /** A free slab now, or null (then wait with {@link slabFreed}). */
  takeSlab(): number | null {
    return this.#free.pop() ?? null;
  }

  returnSlab(slab: number): void {
    this.#free.push(slab);
    this.#slabWaiters.shift()?.();
  }

  slabFreed(): Promise<void> {
    if (this.#dead) return Promise.reject(this.#dead);
    return new Promise((resolve) => this.#slabWaiters.push(resolve));
  }

  begin(): void {
    this.#files++;
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = null;
    // Keeps the process alive while a file is in progress (a worker alone does not).
    this.worker.ref();
  }

  end(): void {
    this.#files--;
    if (this.#files > 0) return;
    this.worker.unref();
    this.#idle = setTimeout(() => this.#retire(), IDLE_MS);
    this.#idle.unref();
  }
}

const workers: FileWorker[] = [];
let nextId = 1;

/** The least busy worker, starting another while every one has work and there is room. */
function pickWorker(): FileWorker {
  const least = workers.reduce<FileWorker | null>((a, w) => (a === null || w.files < a.files ? w : a), null);
  if (least && (least.files === 0 || workers.length >= MAX_WORKERS)) return least;
  const w = new FileWorker((dead) => {
    const i = workers.indexOf(dead);
    if (i >= 0) workers.splice(i, 1);
  });
  workers.push(w);
  return w;
}

export class ObjectFileWriter {
  #slab: number | null = null;
  #filled = 0;
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
    let offset = 0;
    while (offset < bytes.length) {
      if (this.#slab === null) {
        this.#slab = this.w.takeSlab();
        if (this.#slab === null) return this.#writeLater(bytes.subarray(offset));
        this.#filled = 0;
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
    await this.write(rest);
  }

  #hand(): void {
    if (this.#slab === null) return;
    if (this.#filled > 0) this.w.send({ op: 'write', id: this.id, slab: this.#slab, length: this.#filled });
    else this.w.returnSlab(this.#slab);
    this.#slab = null;
    this.#filled = 0;
  }

  /** Writes what is left, truncates, fsyncs and closes the file. */
  async finish(): Promise<WrittenFile> {
    this.#hand();
    const reply = await this.#end('finish');
    if (reply.op !== 'done') throw replyError(reply);
    return { size: reply.size, sha256: reply.sha256 };
  }

  /** Stops, and removes the file. */
  async abort(): Promise<void> {
    if (this.#closed) return;
    if (this.#slab !== null) this.w.returnSlab(this.#slab);
    this.#slab = null;
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
