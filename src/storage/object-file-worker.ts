/**
 * Worker thread of the embedded store: hashes (SHA-256) and writes the bytes of uploads in flight,
 * so that the event loop only copies socket data into the shared arena.
 *
 * Files are opened with O_DIRECT where the filesystem allows it: writes then go from the arena
 * straight to the disk, with no copy into the page cache, and the fsync at the end has almost
 * nothing left to flush. The arena is page-aligned and slabs are whole multiples of DIRECT_ALIGN;
 * the last slab of a file is padded with zeros and the file is truncated to its size before the
 * fsync. Where O_DIRECT is refused (ramfs, some network and FUSE filesystems), the file is written
 * through the page cache instead, with the same result on disk.
 */
import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { DIRECT_ALIGN, SLAB_BYTES, type FromWorker, type ToWorker, type WorkerSetup } from './object-file-protocol.ts';

const port = parentPort!;
const { arena } = workerData as WorkerSetup;
const O_DIRECT = fs.constants.O_DIRECT as number | undefined;

interface Session {
  path: string;
  /** The descriptor writes go to: O_DIRECT one while `direct`, else a buffered one. */
  fd: number;
  direct: boolean;
  /** Descriptors to close at the end (a direct one stays open while its writes finish). */
  fds: number[];
  hash: Hash;
  size: number;
  padded: boolean;
  writing: number;
  failure: NodeJS.ErrnoException | null;
  ending: 'finish' | 'abort' | null;
}

const sessions = new Map<number, Session>();

function post(message: FromWorker): void {
  port.postMessage(message);
}

function slabView(slab: number, length: number): Uint8Array {
  return new Uint8Array(arena, slab * SLAB_BYTES, length);
}

function open(id: number, path: string): void {
  let fd: number;
  let direct = false;
  try {
    if (O_DIRECT) {
      try {
        fd = fs.openSync(path, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | O_DIRECT, 0o640);
        direct = true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EINVAL') throw err;
        // Some filesystems (ramfs) create the file and only then refuse O_DIRECT. O_EXCL means an
        // existing file would have failed with EEXIST, so a file there now is the one just made.
        fd = openCreated(path);
      }
    } else {
      fd = fs.openSync(path, 'wx', 0o640);
    }
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    post({ op: 'error', id, message: e.message, code: e.code });
    return;
  }
  sessions.set(id, { path, fd, direct, fds: [fd], hash: createHash('sha256'), size: 0, padded: false, writing: 0, failure: null, ending: null });
  post({ op: 'opened', id, direct });
}

function openCreated(path: string): number {
  try {
    return fs.openSync(path, fs.constants.O_WRONLY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return fs.openSync(path, 'wx', 0o640);
  }
}

/** Leaves O_DIRECT for the rest of the file (a filesystem that took the flag but not the writes). */
function toBuffered(s: Session): void {
  if (!s.direct) return;
  s.fd = fs.openSync(s.path, 'r+');
  s.fds.push(s.fd);
  s.direct = false;
}

function write(id: number, slab: number, length: number): void {
  const s = sessions.get(id);
  if (!s || s.failure || s.ending === 'abort') {
    post({ op: 'free', slab });
    return;
  }
  s.hash.update(slabView(slab, length));
  const position = s.size;
  s.size += length;
  s.writing++;
  const done = (err: NodeJS.ErrnoException | null) => {
    s.writing--;
    if (err) s.failure ??= err;
    post({ op: 'free', slab });
    settle(id, s);
  };
  const buffered = () => writeAll(s.fd, slabView(slab, length), position, done);
  if (!s.direct) return buffered();
  // Whole blocks only: the tail of the last slab is padded with zeros and cut off again at the end.
  const blocks = Math.ceil(length / DIRECT_ALIGN) * DIRECT_ALIGN;
  if (blocks > length) {
    slabView(slab, blocks).fill(0, length);
    s.padded = true;
  }
  writeAll(s.fd, slabView(slab, blocks), position, (err) => {
    if (err?.code !== 'EINVAL') return done(err);
    try {
      toBuffered(s);
    } catch (e) {
      return done(e as NodeJS.ErrnoException);
    }
    buffered();
  });
}

/** fs.write until every byte is written (a short write continues where it stopped). */
function writeAll(fd: number, bytes: Uint8Array, position: number, cb: (err: NodeJS.ErrnoException | null) => void): void {
  fs.write(fd, bytes, 0, bytes.length, position, (err, written) => {
    if (err) return cb(err);
    if (written < bytes.length) return writeAll(fd, bytes.subarray(written), position + written, cb);
    cb(null);
  });
}

function closeAll(s: Session): void {
  for (const fd of s.fds) {
    try {
      fs.closeSync(fd);
    } catch {
      // already failed; the file is removed or reported below
    }
  }
}

/** Ends a session once its last write is back. */
function settle(id: number, s: Session): void {
  if (!s.ending || s.writing > 0) return;
  sessions.delete(id);
  if (s.ending === 'abort') {
    closeAll(s);
    fs.rm(s.path, { force: true }, () => post({ op: 'aborted', id }));
    return;
  }
  const fail = (err: NodeJS.ErrnoException) => {
    closeAll(s);
    post({ op: 'error', id, message: err.message, code: err.code });
  };
  if (s.failure) return fail(s.failure);
  try {
    if (s.padded) fs.ftruncateSync(s.fds[0]!, s.size);
  } catch (err) {
    return fail(err as NodeJS.ErrnoException);
  }
  // One fsync covers the file whichever descriptor wrote which part.
  fs.fsync(s.fds[s.fds.length - 1]!, (err) => {
    if (err) return fail(err);
    closeAll(s);
    post({ op: 'done', id, size: s.size, sha256: s.hash.digest('hex') });
  });
}

port.on('message', (m: ToWorker) => {
  switch (m.op) {
    case 'open':
      return open(m.id, m.path);
    case 'write':
      return write(m.id, m.slab, m.length);
    case 'finish':
    case 'abort': {
      const s = sessions.get(m.id);
      if (!s) return post(m.op === 'abort' ? { op: 'aborted', id: m.id } : { op: 'error', id: m.id, message: 'no such file in progress' });
      s.ending = m.op;
      return settle(m.id, s);
    }
  }
});
