/**
 * Whether the file system holding a directory is read-only now, from /proc/self/mountinfo (Node's
 * statfs has no f_flag): the mount's own options or its superblock's say "ro", or the kernel
 * turned it read-only after an error (ext4 errors=remount-ro shows "emergency_ro", and "ro" on
 * older kernels). Read when a write has failed, and by doctor: never on a hot path.
 */
import { readFileSync, realpathSync } from 'node:fs';

export interface Mount {
  mountPoint: string;
  source: string;
  fsType: string;
  readOnly: boolean;
}

/** mountinfo escapes space, tab, newline and backslash as \NNN (octal). */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

const READ_ONLY = new Set(['ro', 'emergency_ro', 'shutdown']);

/** The mount holding dir (the last mounted at the longest matching mount point), or null when unknown. */
export function mountOf(dir: string, mountinfo = '/proc/self/mountinfo'): Mount | null {
  let real: string;
  let text: string;
  try {
    real = realpathSync(dir);
    text = readFileSync(mountinfo, 'utf8');
  } catch {
    return null;
  }
  let best: Mount | null = null;
  for (const line of text.split('\n')) {
    const [head, tail] = line.split(' - ');
    if (!head || !tail) continue;
    const fields = head.split(' ');
    const [fsType, source, superOptions = ''] = tail.split(' ');
    const mountPoint = unescape(fields[4] ?? '');
    if (!mountPoint || !(real === mountPoint || mountPoint === '/' || real.startsWith(`${mountPoint}/`))) continue;
    if (best && mountPoint.length < best.mountPoint.length) continue;
    const options = [...(fields[5] ?? '').split(','), ...superOptions.split(',')];
    best = { mountPoint, source: unescape(source ?? ''), fsType: fsType ?? '', readOnly: options.some((o) => READ_ONLY.has(o)) };
  }
  return best;
}

/** The read-only mount holding dir, or null when it is writable (or unknown). */
export function readOnlyMount(dir: string): Mount | null {
  const mount = mountOf(dir);
  return mount?.readOnly ? mount : null;
}
