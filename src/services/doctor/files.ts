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
