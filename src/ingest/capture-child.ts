/**
 * Child process entry of the capture inspector (forked by capture-file.ts; never imported by rigd).
 *
 * Waits for one ChildRequest on IPC, opens the capture read-only and immutable with SQLite's
 * defensive settings, checks the schema policy, runs quick_check, reads the tables through
 * capture-reader.ts, sends one result and exits. The parent enforces time (SIGKILL) and V8 heap
 * (--max-old-space-size); SQLite's own memory is capped here with hard_heap_limit.
 */
import { pathToFileURL } from 'node:url';
import sqlite3 from 'sqlite3';
import type { CaptureRejectReason, ChildMessage, ChildRequest } from './capture-file.ts';
import { CaptureRejected } from './capture-file.ts';
import { all, readTables } from './capture-reader.ts';
import { checkSchemaRow, printable, type SchemaRow } from './capture-schema.ts';

function send(msg: ChildMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) return resolve();
    process.send(msg, undefined, {}, () => resolve());
  });
}

function openReadOnly(file: string): Promise<sqlite3.Database> {
  // immutable=1: the file is rigd's own temp copy and does not change while we read it, so SQLite
  // takes no locks and never looks for or creates -wal, -shm or -journal files (also for WAL-mode files).
  const uri = `${pathToFileURL(file).href}?immutable=1`;
  return new Promise((resolve, reject) => {
    const db: sqlite3.Database = new sqlite3.Database(uri, sqlite3.OPEN_READONLY | sqlite3.OPEN_URI, (err) =>
      err ? reject(err) : resolve(db),
    );
  });
}

function close(db: sqlite3.Database): Promise<void> {
  return new Promise((resolve) => db.close(() => resolve()));
}

function limit(db: sqlite3.Database, id: number | undefined, value: number): void {
  if (typeof id === 'number') db.configure('limit', id, value);
}

async function defend(db: sqlite3.Database, req: ChildRequest): Promise<void> {
  // Limits first: they bound everything below, including the schema parse.
  limit(db, sqlite3.LIMIT_ATTACHED, 0);
  limit(db, sqlite3.LIMIT_LENGTH, req.maxValueBytes);
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
    'query_only = ON',
    'mmap_size = 0',
    `hard_heap_limit = ${heap}`,
    `soft_heap_limit = ${Math.floor(heap / 2)}`,
    'temp_store = MEMORY',
    'cache_size = -8192',
  ]) {
    await all(db, `PRAGMA ${pragma}`);
  }
}

type Step = 'opened' | 'schema' | 'quick_check' | 'tables';

/** Maps an SQLite error to a rejection, by its code and the step it happened in. */
function rejectionFor(err: Error & { code?: string }, step: Step): CaptureRejected {
  const msg = String(err.message ?? err).replace(/^SQLITE_[A-Z_]+: /, '').slice(0, 300);
  const code = err.code ?? '';
  const as = (reason: CaptureRejectReason, text: string) => new CaptureRejected(reason, text);
  if (code === 'SQLITE_NOMEM') return as('resource_limit', `Capture needs more memory than the inspector allows (${msg}).`);
  if (code === 'SQLITE_TOOBIG') {
    return step === 'tables'
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

async function inspect(req: ChildRequest): Promise<ChildMessage> {
  let step: Step = 'opened';
  let db: sqlite3.Database | undefined;
  try {
    db = await openReadOnly(req.file);
    await defend(db, req);
    await send({ type: 'step', step });

    // Schema policy before quick_check: quick_check runs virtual-table code (FTS5's integrity check)
    // on the file's content, so such objects must be refused first. Reading sqlite_schema touches only
    // what SQLite parses anyway to prepare any statement, quick_check included.
    step = 'schema';
    await send({ type: 'step', step });
    const cap = req.maxTables * 20 + 1;
    const rows = await all<SchemaRow>(
      db,
      `SELECT type, name, tbl_name, sql FROM main.sqlite_schema ORDER BY rowid LIMIT ${cap}`,
    );
    if (rows.length >= cap) {
      return rejected('unsupported_schema', `Capture schema is not supported: it has more than ${cap - 1} schema objects.`);
    }
    for (const row of rows) {
      const problem = checkSchemaRow(row);
      if (problem) return rejected('unsupported_schema', `Capture schema is not supported: ${problem}.`);
    }
    const plain = rows.filter((r) => r.type === 'table' && !r.name.toLowerCase().startsWith('sqlite_'));
    if (plain.length > req.maxTables) {
      return rejected('unsupported_schema', `Capture schema is not supported: it has ${plain.length} tables, more than ${req.maxTables}.`);
    }
    // SQLite's own view of what it parsed (views and virtual tables were refused above, so this
    // connects to nothing): every object must be an ordinary table.
    for (const t of await all<{ schema: string; name: string; type: string }>(db, 'PRAGMA main.table_list')) {
      if (t.type !== 'table') {
        return rejected('unsupported_schema', `Capture schema is not supported: ${printable(t.name)} is a ${t.type}, not a plain table.`);
      }
    }

    step = 'quick_check';
    await send({ type: 'step', step });
    const check = await all<{ quick_check: string }>(db, 'PRAGMA main.quick_check(1)');
    const first = check[0]?.quick_check;
    if (check.length !== 1 || first !== 'ok') {
      return rejected('corrupt', `Capture is corrupt: SQLite's quick_check reports ${printable(String(first), 200)}.`);
    }

    step = 'tables';
    await send({ type: 'step', step });
    const tables = await readTables(db, { maxValueBytes: req.maxValueBytes });
    const pageSize = Number((await all<{ page_size: number }>(db, 'PRAGMA main.page_size'))[0]!.page_size);
    const pageCount = Number((await all<{ page_count: number }>(db, 'PRAGMA main.page_count'))[0]!.page_count);
    return { type: 'result', ok: true, pageSize, pageCount, tables };
  } catch (err) {
    if (err instanceof CaptureRejected) return rejected(err.reason, err.message);
    return rejected(rejectionFor(err as Error, step).reason, rejectionFor(err as Error, step).message);
  } finally {
    if (db) await close(db);
  }
}

function rejected(reason: CaptureRejectReason, message: string): ChildMessage {
  return { type: 'result', ok: false, reason, message };
}

process.once('message', (req: ChildRequest) => {
  void inspect(req)
    .catch((err: unknown) => rejected('corrupt', `Capture could not be inspected: ${String((err as Error)?.message ?? err).slice(0, 300)}`))
    .then(async (result) => {
      await send({ type: 'stats', maxRssKb: process.resourceUsage().maxRSS });
      await send(result);
      process.exit(0);
    });
});
void send({ type: 'step', step: 'started' });
