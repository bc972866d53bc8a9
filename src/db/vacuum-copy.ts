/**
 * A checked copy of a live SQLite file, the way both backups write one (the service database's,
 * db/backup.ts, and the capture store's, capture-store/backup.ts): `VACUUM INTO` a temp name next to
 * the target, created empty and 0600 first (VACUUM INTO keeps an existing file's mode; SQLite would
 * create it 0644, and the copies hold password hashes and session tokens), then checked, fsynced and
 * only then renamed into place, the directory fsynced after. A failure or a Ctrl-C on the way leaves
 * no temp file behind; the target is never half-written.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { removeOnInterrupt } from '../temp-files.ts';

export interface CopyResult {
  file: string;
  bytes: number;
}

/** fsync of a file or a directory by its path. */
export function fsyncPath(p: string): void {
  const fd = openSync(p, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes `target` (which must not exist) through `vacuumInto(tmp)`, which runs `VACUUM INTO` the temp
 * file on a connection of its own, and `check(tmp)`, which throws when the copy is not sound.
 */
export async function writeCheckedCopy(
  target: string,
  vacuumInto: (tmp: string) => Promise<void>,
  check: (tmp: string) => Promise<void>,
): Promise<CopyResult> {
  const dest = path.resolve(target);
  if (existsSync(dest)) throw new Error(`${dest} already exists: choose a new file name`);
  const tmp = path.join(path.dirname(dest), `.${path.basename(dest)}.${randomBytes(4).toString('hex')}.tmp`);
  // Registered before the file exists: a signal in between must not find it unregistered. VACUUM
  // INTO writes a rollback journal beside it while it runs.
  const done = removeOnInterrupt(tmp, `${tmp}-journal`);
  try {
    closeSync(openSync(tmp, 'wx', 0o600));
    chmodSync(tmp, 0o600); // whatever the umask
    await vacuumInto(tmp);
    await check(tmp);
    fsyncPath(tmp);
    renameSync(tmp, dest);
    fsyncPath(path.dirname(dest));
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  } finally {
    done();
  }
  return { file: dest, bytes: statSync(dest).size };
}
