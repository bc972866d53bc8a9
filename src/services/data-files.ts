/**
 * Who owns what rigd keeps in data_dir. The service runs as data_dir's owner; an operator command run
 * as root must not leave files there that the service cannot write (a root-owned rigd.sqlite-wal turns
 * every write into SQLITE_READONLY). Root commands hand what they created over to data_dir's owner
 * ({@link handOver}); doctor and /healthz name any data file the service cannot write
 * ({@link unwritableDataFiles}).
 */
import { lchownSync, lstatSync, readdirSync, readFileSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';

export interface Owner {
  uid: number;
  gid: number;
}

/** A process's identity for a permission check. */
export interface Identity extends Owner {
  /** Supplementary groups. */
  groups?: number[];
}

/** The owner of dir, or of its nearest existing ancestor when dir does not exist yet. */
export function dataDirOwner(dir: string): Owner {
  let p = path.resolve(dir);
  for (;;) {
    try {
      const st = statSync(p);
      return { uid: st.uid, gid: st.gid };
    } catch {
      const up = path.dirname(p);
      if (up === p) return { uid: 0, gid: 0 };
      p = up;
    }
  }
}

let names: Map<number, string> | undefined;

/** The user name of uid (from /etc/passwd), else "uid N". */
export function userName(uid: number): string {
  if (!names) {
    names = new Map();
    try {
      for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
        const [name, , id] = line.split(':');
        if (name && id !== undefined && /^\d+$/.test(id) && !names.has(Number(id))) names.set(Number(id), name);
      }
    } catch {
      // No passwd file: numbers only.
    }
  }
  return names.get(uid) ?? `uid ${uid}`;
}

/** Whether who may write st (and, for a directory, create files in it), by owner, group and mode. */
export function writableBy(st: Stats, who: Identity): boolean {
  if (who.uid === 0) return true;
  const need = st.isDirectory() ? 0o3 : 0o2; // write (+ search for directories)
  let bits: number;
  if (st.uid === who.uid) bits = st.mode >> 6;
  else if (st.gid === who.gid || who.groups?.includes(st.gid)) bits = st.mode >> 3;
  else bits = st.mode;
  return (bits & need) === need;
}

export interface UnwritableFile {
  file: string;
  owner: string;
  mode: string;
}

/** data_dir and the files and directories directly in it that who cannot write. Symlinks are skipped. */
export function unwritableDataFiles(dataDir: string, who: Identity): UnwritableFile[] {
  const dir = path.resolve(dataDir);
  const out: UnwritableFile[] = [];
  const check = (file: string) => {
    let st: Stats;
    try {
      st = lstatSync(file);
    } catch {
      return; // gone meanwhile (a -shm file SQLite removed)
    }
    if (st.isSymbolicLink() || writableBy(st, who)) return;
    out.push({ file, owner: userName(st.uid), mode: (st.mode & 0o7777).toString(8).padStart(4, '0') });
  };
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return out; // no data_dir yet: nothing of rigd's is unwritable
  }
  check(dir);
  for (const name of entries.sort()) check(path.join(dir, name));
  return out;
}

/** "FILE (owner root, mode 0644)" for each, joined. */
export function describeUnwritable(files: UnwritableFile[]): string {
  return files.map((f) => `${f.file} (owner ${f.owner}, mode ${f.mode})`).join(', ');
}

/**
 * When this process runs as root and data_dir belongs to another user, gives everything under dataDir
 * that root owns (what this process created: the database and its -wal/-shm, secrets, storage
 * directories, temp files) to that owner. owner is data_dir's owner as it was before the command ran
 * (see {@link dataDirOwner}), so a data_dir the command created itself is handed over too.
 * With createdSince (ms since the epoch), only entries changed since then (what this command made) move.
 * Returns how many entries changed owner.
 */
export function handOver(dataDir: string, owner: Owner, opts: { createdSince?: number } = {}): number {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0 || owner.uid === 0) return 0;
  let changed = 0;
  const walk = (p: string) => {
    let st: Stats;
    try {
      st = lstatSync(p);
    } catch {
      return;
    }
    // File times come from a coarse kernel clock: allow a few milliseconds.
    if (st.uid === 0 && (opts.createdSince === undefined || st.ctimeMs >= opts.createdSince - 20)) {
      lchownSync(p, owner.uid, owner.gid);
      changed++;
    }
    if (!st.isDirectory()) return;
    let entries: string[] = [];
    try {
      entries = readdirSync(p);
    } catch {
      return;
    }
    for (const name of entries) walk(path.join(p, name));
  };
  walk(path.resolve(dataDir));
  return changed;
}
