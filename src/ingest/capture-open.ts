/**
 * Opening an untrusted capture in the child: read-only and immutable, SQLite's defensive limits and
 * pragmas, the schema policy (capture-schema.ts) and quick_check. Everything after (describing the
 * tables, streaming the rows) works on the handle this returns.
 */
import type sqlite3 from 'sqlite3';
import { quickCheck, schemaRows, tableList } from '../db/capture-file/checks.ts';
import { close, defend, openReadOnly } from '../db/capture-file/handle.ts';
import type { ChildRequest } from './capture-protocol.ts';
import { CaptureRejected, type CaptureRejectReason } from './capture-rejected.ts';
import { checkSchemaRow, printable } from './capture-schema.ts';

// The connection's statements and defences (read-only, immutable, SQLite's limits) are db/capture-file's.
export { close, defend };

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
  /** False: stop after the schema policy; the caller runs checkQuick itself (alongside an uncommitted copy). */
  withQuickCheck = true,
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
    const rows = await schemaRows(db, cap);
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
    for (const t of await tableList(db)) {
      if (t.type !== 'table') throw refuse(`${printable(t.name)} is a ${t.type}, not a plain table`);
    }

    if (!withQuickCheck) return db;
    step = 'quick_check';
    await onStep(step);
    await checkQuick(db);
    return db;
  } catch (err) {
    if (err instanceof CaptureRejected) throw err;
    throw rejectionFor(err as Error, step);
  }
}

/** SQLite's quick_check on the opened capture (after the schema policy): throws CaptureRejected('corrupt') unless it says ok. */
export async function checkQuick(db: sqlite3.Database): Promise<void> {
  try {
    const first = await quickCheck(db);
    if (first !== 'ok') {
      throw new CaptureRejected('corrupt', `Capture is corrupt: SQLite's quick_check reports ${printable(String(first), 200)}.`);
    }
  } catch (err) {
    if (err instanceof CaptureRejected) throw err;
    throw rejectionFor(err as Error, 'quick_check');
  }
}
