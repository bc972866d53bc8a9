import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { dataDirOwner, describeUnwritable, unwritableDataFiles, userName } from '../data-files.ts';
import { fail, ok, type Finding } from './finding.ts';

/**
 * Every file and directory directly in data_dir is writable by data_dir's owner, the user rigd serve
 * runs as (a root-owned rigd.sqlite-wal left by a command run as root makes every write fail).
 */
export function checkDataFiles(dataDir: string): Finding {
  const dir = path.resolve(dataDir);
  const owner = dataDirOwner(dir);
  const user = userName(owner.uid);
  const bad = unwritableDataFiles(dir, owner);
  if (bad.length === 0) return ok('data_files', `every file in ${dir} is writable by its owner ${user}`);
  return fail(
    'data_files',
    `${user} (the owner of ${dir}, who runs rigd serve) cannot write ${describeUnwritable(bad)}`,
    `stop rigd, then: chown -R ${user}: ${dir} (and run rigd commands as ${user}: runuser -u ${user} -- rigd ...)`,
  );
}

/** The file /healthz writes and syncs in data_dir (overwritten each time, a few bytes). */
export const HEALTH_PROBE_FILE = '.healthz-probe';

/**
 * /healthz's disk probe: writes a few bytes into data_dir and syncs them to the disk, so that a
 * file system the kernel made read-only (EROFS) or a disk failing its writes (EIO at fsync) is seen
 * at the next poll, with or without traffic. 'ok', or what is wrong.
 */
export async function probeDataDirWrite(dataDir: string): Promise<string> {
  const file = path.join(path.resolve(dataDir), HEALTH_PROBE_FILE);
  let handle: FileHandle | undefined;
  try {
    handle = await open(file, 'w', 0o600);
    await handle.writeFile(`${new Date().toISOString()}\n`);
    await handle.datasync();
    return 'ok';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (code === 'EROFS') return `the file system holding ${path.resolve(dataDir)} is read-only (EROFS): every write fails`;
    if (code === 'EIO') return `writing and syncing in ${path.resolve(dataDir)} fails (EIO): the disk is failing`;
    if (code === 'ENOSPC' || code === 'EDQUOT') return `${path.resolve(dataDir)} is full (${code})`;
    return `cannot write in ${path.resolve(dataDir)} (${code || String(err)})`;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
