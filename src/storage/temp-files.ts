/**
 * Temp files of the embedded store's PUTs, in `objects/.tmp/`: `<pid>-<random>.part` (content) and
 * `<pid>-<random>.json.part` (a sidecar being written). The pid names the process writing the file,
 * so one whose process is gone (killed, crashed, the machine rebooted) is known to be an orphan.
 */
import { randomBytes } from 'node:crypto';
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';

/** Even a file named after a live process is removed this long after it was last written (pid reuse). */
const STALE_MS = 24 * 3600 * 1000;
const NAME = /^(\d+)-[0-9a-f]+\.(?:json\.)?part$/;

export function tempName(suffix: 'part' | 'json.part'): string {
  return `${process.pid}-${randomBytes(12).toString('hex')}.${suffix}`;
}

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the temp files in `dir` that no live process writes: names of a process that is gone, and
 * names without a pid (left by earlier versions). Returns how many were removed.
 */
export async function sweepOrphans(dir: string): Promise<number> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const cutoff = Date.now() - STALE_MS;
  let removed = 0;
  for (const name of names) {
    const p = path.join(dir, name);
    const pid = NAME.exec(name)?.[1];
    if (pid !== undefined && alive(Number(pid))) {
      const st = await stat(p).catch(() => null);
      if (!st || st.mtimeMs >= cutoff) continue;
    }
    await rm(p, { force: true, recursive: true })
      .then(() => removed++)
      .catch(() => undefined);
  }
  return removed;
}
