import { CannotStart } from '../errors.ts';

/** SQLite result codes that mean the file itself cannot be used, not that a statement is wrong. */
const OPEN_CODES = new Set([
  'SQLITE_CANTOPEN',
  'SQLITE_NOTADB',
  'SQLITE_READONLY',
  'SQLITE_PERM',
  'SQLITE_AUTH',
  'SQLITE_IOERR',
  'SQLITE_CORRUPT',
  'SQLITE_FULL',
]);

/** File system errors from creating data_dir or opening the file. */
const FS_CODES = new Set(['EACCES', 'EPERM', 'ENOTDIR', 'EISDIR', 'EROFS', 'ENOSPC', 'ENOENT', 'ELOOP', 'ENAMETOOLONG', 'EEXIST']);

/** The code of err or of the driver error Sequelize wrapped in it. */
function codeOf(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; original?: unknown; parent?: unknown } | undefined, i = 0; e && i < 3; i++) {
    if (typeof e.code === 'string') return e.code;
    e = (e.original ?? e.parent) as typeof e;
  }
  return undefined;
}

function reasonOf(err: unknown, code: string): string {
  const e = (err as { original?: Error }).original ?? (err as Error);
  const text = String(e?.message ?? err).split('\n')[0];
  // "SQLITE_CANTOPEN: unable to open database file" -> "unable to open database file (SQLITE_CANTOPEN)";
  // "EACCES: permission denied, mkdir '/x'" -> "permission denied, mkdir '/x' (EACCES)"
  const bare = text.replace(/^[A-Z_]+: /, '');
  return `${bare} (${code})`;
}

/**
 * The error to report when the database file `file` cannot be opened: CannotStart with one line
 * naming the file, or null when err is something else (a bug, which keeps its stack).
 */
export function databaseOpenError(file: string, err: unknown): CannotStart | null {
  if (err instanceof CannotStart) return err;
  const code = codeOf(err);
  if (!code || !(OPEN_CODES.has(code) || FS_CODES.has(code))) return null;
  return new CannotStart(`cannot open the database ${file}: ${reasonOf(err, code)}`, code);
}
