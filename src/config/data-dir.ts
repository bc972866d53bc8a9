/**
 * data_dir: where it resolves to, and whether it can be one. It must be a directory, or a path that
 * can be created (its nearest existing parent is a directory), and never under /proc, /sys or /dev
 * (kernel file systems: the database cannot live there), also not through a symbolic link.
 * Writability is not checked here: `rigd doctor` reports it, and opening the database says so.
 */
import { existsSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

const KERNEL_DIRS = ['/proc', '/sys', '/dev'];
const EXPECTED = '(expected a directory outside /proc, /sys and /dev, like /var/lib/rigd)';

/**
 * The absolute data_dir: a relative value from a config file resolves against that file's
 * directory; from the environment, a flag or the defaults, against the working directory.
 */
export function resolveDataDir(value: string, configFile: string | null): string {
  return configFile ? path.resolve(path.dirname(path.resolve(configFile)), value) : path.resolve(value);
}

function kernelDir(p: string): string | undefined {
  return KERNEL_DIRS.find((k) => p === k || p.startsWith(`${k}/`));
}

/** Why dir (absolute) cannot be data_dir, in the words of a config error, or null when it can. */
export function dataDirProblem(dir: string): string | null {
  const lexical = kernelDir(dir);
  if (lexical) return `is under ${lexical} ${EXPECTED}`;
  // The nearest part of the path that exists: dir itself, or the parent it would be created in.
  let existing = dir;
  for (;;) {
    try {
      const st = statSync(existing);
      if (!st.isDirectory()) {
        return existing === dir ? `is not a directory ${EXPECTED}` : `cannot be created: ${existing} is not a directory ${EXPECTED}`;
      }
      break;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return null; // EACCES and the like: opening it will say
      const parent = path.dirname(existing);
      if (parent === existing) return null;
      existing = parent;
    }
  }
  let real: string;
  try {
    real = realpathSync(existing);
  } catch {
    return null;
  }
  const under = kernelDir(real);
  return under ? `is under ${under} through ${existing} -> ${real} ${EXPECTED}` : null;
}

/**
 * The line refusing a data_dir (absolute) that does not exist to a command that only reads it, or
 * null when it exists.
 */
export function dataDirMissing(dir: string): string | null {
  if (existsSync(dir)) return null;
  return `data_dir ${dir} does not exist: check RIGD_DATA_DIR, data_dir in the config file or --config (rigd serve, rigd migrate and rigd user add create it; this command only reads)`;
}
