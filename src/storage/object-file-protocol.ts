/**
 * Messages between the embedded store and its object-file worker threads (see object-file-writer.ts).
 * The bytes themselves never travel in messages: they sit in a shared arena of slabs, and a message
 * names the slab.
 */

/** One slab of the shared arena: the unit of copying, hashing and writing. */
export const SLAB_BYTES = 1024 * 1024;
/** Slabs per worker (the most bytes one worker holds at once is SLABS_PER_WORKER * SLAB_BYTES). */
export const SLABS_PER_WORKER = 8;
/** Memory address, file offset and length alignment that O_DIRECT writes need on Linux filesystems. */
export const DIRECT_ALIGN = 4096;

export type ToWorker =
  | { op: 'open'; id: number; path: string }
  | { op: 'write'; id: number; slab: number; length: number }
  | { op: 'finish'; id: number }
  | { op: 'abort'; id: number };

export type FromWorker =
  | { op: 'opened'; id: number; direct: boolean }
  | { op: 'free'; slab: number }
  | { op: 'done'; id: number; size: number; sha256: string }
  | { op: 'aborted'; id: number }
  | { op: 'error'; id: number; message: string; code?: string };

export interface WorkerSetup {
  /** The arena: SLABS_PER_WORKER slabs, page-aligned (WebAssembly memory), shared with the main thread. */
  arena: SharedArrayBuffer;
}
