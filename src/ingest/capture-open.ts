/**
 * Opening an untrusted capture in the child: read-only and immutable, SQLite's defensive limits and
 * pragmas, the schema policy (capture-schema.ts) and quick_check. Everything after (describing the
 * tables, streaming the rows) works on the handle this returns.
 */
import { pathToFileURL } from 'node:url';
import sqlite3 from 'sqlite3';
import type { ChildRequest } from './capture-protocol.ts';
import { all } from './capture-reader.ts';
import { CaptureRejected, type CaptureRejectReason } from './capture-rejected.ts';
import { checkSchemaRow, printable, type SchemaRow } from './capture-schema.ts';

export function openReadOnly(file: string): Promise<sqlite3.Database> {
  // immutable=1: the file is rigd's own temp copy and does not change while we read it, so SQLite
  // takes no locks and never looks for or creates -wal, -shm or -journal files (also for WAL-mode files).
  const uri = `${pathToFileURL(file).href}?immutable=1`;
  return new Promise((resolve, reject) => {
    const db: sqlite3.Database = new sqlite3.Database(uri, sqlite3.OPEN_READONLY | sqlite3.OPEN_URI, (err) =>
      err ? reject(err) : resolve(db),
    );
  });
}

export function close(db: sqlite3.Database): Promise<void> {
  return new Promise((resolve) => db.close(() => resolve()));
}

/** SQLite's own upper bound of LIMIT_LENGTH (SQLITE_MAX_LENGTH as built). */
const SQLITE_MAX_LENGTH = 1_000_000_000;

function limit(db: sqlite3.Database, id: number | undefined, value: number): void {
  if (typeof id === 'number') db.configure('limit', id, value);
}

/**
 * SQLite's defensive limits and pragmas on a connection that reads the capture. `forCopy`: the
 * store's connection in an import in the engine, which attaches the (already checked) capture and
 * writes the store: one attached database allowed, and not query-only (the capture is attached
 * read-only and immutable, so nothing can write to it).
 */
export async function defend(db: sqlite3.Database, req: ChildRequest, forCopy = false): Promise<void> {
  // Limits first: they bound everything below, including the schema parse.
  limit(db, sqlite3.LIMIT_ATTACHED, forCopy ? 1 : 0);
  // LIMIT_LENGTH bounds a whole row's record too: the copy writes capture_id and every value of a
  // row as one record, each value already checked against maxValueBytes (readTables), so that
  // connection allows rows as long as SQLite builds them.
  limit(db, sqlite3.LIMIT_LENGTH, forCopy ? SQLITE_MAX_LENGTH : req.maxValueBytes);
  limit(db, sqlite3.LIMIT_SQL_LENGTH, 1024 * 1024);
  limit(db, sqlite3.LIMIT_COLUMN, 2000);
  limit(db, sqlite3.LIMIT_EXPR_DEPTH, 100);
  limit(db, sqlite3.LIMIT_COMPOUND_SELECT, 4);
  limit(db, sqlite3.LIMIT_VDBE_OP, 100_000);
  limit(db, sqlite3.LIMIT_FUNCTION_ARG, 8);
  limit(db, sqlite3.LIMIT_LIKE_PATTERN_LENGTH, 100);
  limit(db, sqlite3.LIMIT_VARIABLE_NUMBER, 16);
  limit(db, sqlite3.LIMIT_TRIGGER_DEPTH, 1);
  limit(db, sqlite3.LIMIT_WORKER_THREADS, 0);
  const heap = req.memoryLimitMb * 1024 * 1024;
  for (const pragma of [
    'trusted_schema = OFF',
    'cell_size_check = ON',
    ...(forCopy ? [] : ['query_only = ON']),
    'mmap_size = 0',
    `hard_heap_limit = ${heap}`,
    `soft_heap_limit = ${Math.floor(heap / 2)}`,
    'temp_store = MEMORY',
    'cache_size = -8192',
  ]) {
    await all(db, `PRAGMA ${pragma}`);
  }
}

export type Step = 'opened' | 'schema' | 'quick_check' | 'tables' | 'import';

/** Maps an SQLite error to a rejection, by its code and the step it happened in. */
export function rejectionFor(err: Error & { code?: string }, step: Step): CaptureRejected {
  const msg = String(err.message ?? err).replace(/^SQLITE_[A-Z_]+: /, '').slice(0, 300);
  const code = err.code ?? '';
  const as = (reason: CaptureRejectReason, text: string) => new CaptureRejected(reason, text);
  if (code === 'SQLITE_NOMEM') return as('resource_limit', `Capture needs more memory than the inspector allows (${msg}).`);
  if (code === 'SQLITE_TOOBIG') {
    return step === 'tables' || step === 'import'
      ? as('row_too_large', `Capture has a value larger than the inspector's length limit (${msg}).`)
      : as('unsupported_schema', `Capture schema is not supported: a definition exceeds the inspector's limits (${msg}).`);
  }
  if (/no such (collation|module|function)|unsafe use of|too many columns|too many attached/i.test(msg)) {
    return as('unsupported_schema', `Capture schema is not supported: ${msg}.`);
  }
  if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB' || /malformed|not a database/i.test(msg)) {
    return as('corrupt', `Capture is corrupt: ${msg}.`);
  }
  return as('corrupt', `Capture could not be read at step ${step}: ${msg}.`);
}

/**
 * Opens the capture and applies the defences, the schema policy and quick_check, reporting each step.
 * Throws CaptureRejected when the file is refused; the caller closes the handle (also on error: the
 * handle is passed to `opened` as soon as it exists).
 */
export async function openChecked(
  req: ChildRequest,
  onStep: (step: Step) => Promise<void>,
  opened: (db: sqlite3.Database) => void,
): Promise<sqlite3.Database> {
  let step: Step = 'opened';
  try {
    const db = await openReadOnly(req.file);
    opened(db);
    await defend(db, req);
    await onStep(step);

    // Schema policy before quick_check: quick_check runs virtual-table code (FTS5's integrity check)
    // on the file's content, so such objects must be refused first. Reading sqlite_schema touches only
    // what SQLite parses anyway to prepare any statement, quick_check included.
    step = 'schema';
    await onStep(step);
    const cap = req.maxTables * 20 + 1;
    const rows = await all<SchemaRow>(db, `SELECT type, name, tbl_name, sql FROM main.sqlite_schema ORDER BY rowid LIMIT ${cap}`);
    const refuse = (text: string) => new CaptureRejected('unsupported_schema', `Capture schema is not supported: ${text}.`);
    if (rows.length >= cap) throw refuse(`it has more than ${cap - 1} schema objects`);
    for (const row of rows) {
      const problem = checkSchemaRow(row);
      if (problem) throw refuse(problem);
    }
    const plain = rows.filter((r) => r.type === 'table' && !r.name.toLowerCase().startsWith('sqlite_'));
    if (plain.length > req.maxTables) {
      throw new CaptureRejected('too_many_tables', `Capture has ${plain.length} tables, more than the ${req.maxTables} a capture may have (captures.max_tables).`);
    }
    // SQLite's own view of what it parsed (views and virtual tables were refused above, so this
    // connects to nothing): every object must be an ordinary table.
    for (const t of await all<{ schema: string; name: string; type: string }>(db, 'PRAGMA main.table_list')) {
      if (t.type !== 'table') throw refuse(`${printable(t.name)} is a ${t.type}, not a plain table`);
    }

    step = 'quick_check';
    await onStep(step);
    const check = await all<{ quick_check: string }>(db, 'PRAGMA main.quick_check(1)');
    const first = check[0]?.quick_check;
    if (check.length !== 1 || first !== 'ok') {
      throw new CaptureRejected('corrupt', `Capture is corrupt: SQLite's quick_check reports ${printable(String(first), 200)}.`);
    }
    return db;
  } catch (err) {
    if (err instanceof CaptureRejected) throw err;
    throw rejectionFor(err as Error, step);
  }
}
