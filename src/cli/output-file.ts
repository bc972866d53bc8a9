import { statSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from './fail.ts';

function kindOf(file: string): 'missing' | 'directory' | 'file' {
  try {
    return statSync(file).isDirectory() ? 'directory' : 'file';
  } catch {
    return 'missing';
  }
}

/**
 * A file an option names for output (`-o FILE`), refused before any work when it cannot be one:
 * a directory, or a place whose directory does not exist. Returns the absolute path.
 */
export function outputFile(flag: string, file: string): string {
  const abs = path.resolve(file);
  if (kindOf(abs) === 'directory') throw new UsageError(`${flag}: ${abs} is a directory: name a file in it`);
  const dir = path.dirname(abs);
  const kind = kindOf(dir);
  if (kind === 'missing') throw new UsageError(`${flag}: directory ${dir} does not exist: create it or choose another place`);
  if (kind === 'file') throw new UsageError(`${flag}: ${dir} is not a directory`);
  return abs;
}
