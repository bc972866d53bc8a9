import { statSync } from 'node:fs';
import path from 'node:path';
import { DomainError } from '../errors.ts';
import { UsageError } from './fail.ts';

/** rigd backup or restore could not do what was asked: exit 1 with one line. */
export class BackupFailed extends DomainError {
  constructor(message: string) {
    super('unprocessable', 'backup_failed', message);
  }
}

function kindOf(file: string): 'missing' | 'directory' | 'file' {
  try {
    return statSync(file).isDirectory() ? 'directory' : 'file';
  } catch {
    return 'missing';
  }
}

/**
 * What an operator gets wrong naming where a backup goes, refused before anything is written (on
 * either engine): an empty name, a directory that does not exist, the capture store's copy aimed at
 * the database's. The file already existing is refused where it is written (db/backup.ts).
 */
export function checkBackupTargets(file: string, captureStore?: string): void {
  if (file.trim() === '') throw new UsageError('FILE is empty: name a new file for the backup, e.g. /var/backups/rigd.sqlite');
  if (captureStore !== undefined && captureStore.trim() === '') throw new UsageError('--capture-store is empty: name a new file for the capture store copy');
  if (captureStore !== undefined && path.resolve(captureStore) === path.resolve(file)) {
    throw new UsageError('--capture-store names the same file as the database backup: give it another file');
  }
  for (const target of captureStore === undefined ? [file] : [file, captureStore]) {
    const dir = path.dirname(path.resolve(target));
    const kind = kindOf(dir);
    if (kind === 'missing') throw new BackupFailed(`backup failed: directory ${dir} does not exist: create it or choose another place`);
    if (kind === 'file') throw new BackupFailed(`backup failed: ${dir} is not a directory`);
  }
}

/** The backup to restore from: refused before anything is touched when there is no such file. */
export function checkRestoreSource(file: string): void {
  if (file.trim() === '') throw new UsageError('FILE is empty: name a file written by rigd backup');
  const kind = kindOf(file);
  if (kind === 'missing') throw new BackupFailed(`restore refused: ${path.resolve(file)} does not exist`);
  if (kind === 'directory') throw new BackupFailed(`restore refused: ${path.resolve(file)} is a directory, not a file written by rigd backup`);
}
