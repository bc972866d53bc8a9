/**
 * The object-file worker threads of the embedded store and their slab arenas (see object-file-writer.ts):
 * up to one worker per core (at most 4), each serving any number of files, started on demand and
 * stopped after a while without work.
 */
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { SLAB_BYTES, SLABS_PER_WORKER, type FromWorker, type ToWorker, type WorkerSetup } from './object-file-protocol.ts';

// Node has WebAssembly; the compiler's libraries here do not describe it.
declare const WebAssembly: { Memory: new (d: { initial: number; maximum: number; shared: true }) => { buffer: SharedArrayBuffer } };

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

/** A writer that can give back the slab it is filling. */
export interface SlabHolder {
  park(): void;
}

interface Pending {
  resolve: (value: FromWorker) => void;
  reject: (err: Error) => void;
}

export class FileWorker {
  readonly worker: Worker;
  readonly arena: Uint8Array;
  readonly #free: number[] = [];
  readonly #slabWaiters: Array<() => void> = [];
  readonly #replies = new Map<number, Pending>();
  /** Writers holding a partly filled slab. */
  readonly #holders = new Set<SlabHolder>();
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

  /**
   * A free slab for `holder` now, or null (then wait with {@link slabFreed}). When none is free,
   * the other holders park theirs first.
   */
  takeSlab(holder: SlabHolder): number | null {
    let slab = this.#free.pop();
    if (slab === undefined) {
      for (const other of [...this.#holders]) if (other !== holder) other.park();
      slab = this.#free.pop();
    }
    if (slab === undefined) return null;
    this.#holders.add(holder);
    return slab;
  }

  /** `holder` no longer has a slab. */
  released(holder: SlabHolder): void {
    this.#holders.delete(holder);
  }

  returnSlab(slab: number): void {
    this.#free.push(slab);
    this.#slabWaiters.shift()?.();
  }

  /** Wakes the next writer waiting for a slab (the one woken no longer needs it). */
  passOn(): void {
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

/** The least busy worker, starting another while every one has work and there is room. */
export function pickWorker(): FileWorker {
  const least = workers.reduce<FileWorker | null>((a, w) => (a === null || w.files < a.files ? w : a), null);
  if (least && (least.files === 0 || workers.length >= MAX_WORKERS)) return least;
  const w = new FileWorker((dead) => {
    const i = workers.indexOf(dead);
    if (i >= 0) workers.splice(i, 1);
  });
  workers.push(w);
  return w;
}
