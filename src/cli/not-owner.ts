import { existsSync } from 'node:fs';
import { dataDirOwner, userName } from '../services/data-files.ts';

/** The data_dir of the command that runs (set once its config loads). */
let dataDir: string | undefined;

/** Remembers the command's data_dir for {@link notOwnerHint}. Called once the config loads. */
export function noteDataDirForFailures(dir: string): void {
  dataDir = dir;
}

/** A failure that says this process may not write or open a file (the driver's words, or DatabaseReadOnly's). */
const DENIED = /\b(SQLITE_READONLY|SQLITE_CANTOPEN|SQLITE_PERM|EACCES|EPERM)\b|readonly database|permission denied|database cannot be written/i;

/**
 * What to add to a failure line when the cause is most likely the user the command runs as: an
 * operator without sudo on data_dir of the service user (or of root). Empty otherwise.
 */
export function notOwnerHint(line: string): string {
  if (!dataDir || typeof process.getuid !== 'function' || !DENIED.test(line)) return '';
  const uid = process.getuid();
  if (uid === 0) return '';
  const owner = dataDirOwner(dataDir);
  if (owner.uid === uid) return '';
  // Not there at all: most likely a mistyped data_dir, which sudo would only create.
  if (!existsSync(dataDir)) return `; data_dir ${dataDir} does not exist and this user may not create it: check data_dir (or RIGD_DATA_DIR)`;
  if (owner.uid === 0) return `; data_dir ${dataDir} belongs to root: run rigd with sudo`;
  const name = userName(owner.uid);
  const sudoUser = name.startsWith('uid ') ? `'#${owner.uid}'` : name;
  return `; data_dir ${dataDir} belongs to ${name}: run rigd as that user (sudo -u ${sudoUser} rigd ...)`;
}
