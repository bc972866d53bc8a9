/**
 * `rigd captures query SQL`: the operator's SQL over the capture store, on the box. The store is
 * opened read-only (read.ts: SQLITE_OPEN_READONLY, query_only, no ATTACH), so SQLite itself refuses
 * any write. Bounded: at most `limit` rows are read (one more tells whether there were more) and the
 * statement is interrupted after `timeoutMs`. One statement at a time: a text with more is refused.
 */
import { finalize, openStoreReadOnly, prepare, step, type StoreRow } from '../../db/capture-store/read.ts';
import { DomainError, InvalidInput } from '../../errors.ts';
import { firstStatementEnd, isEmptySql } from './sql-text.ts';

export interface QueryOptions {
  /** Most rows returned. @default 1000 */
  limit?: number;
  /** Interrupt the statement after this long. @default 30000 */
  timeoutMs?: number;
}

export interface QueryResult {
  /** Result column names (from the first row; empty when there is none). */
  columns: string[];
  rows: StoreRow[];
  /** More rows than `limit` matched. */
  truncated: boolean;
}

function sqliteCode(err: unknown): string {
  return String((err as { code?: unknown }).code ?? '');
}

/** SQLite's message without node-sqlite3's "SQLITE_X: " prefix. */
function sqliteMessage(err: unknown): string {
  return String((err as Error).message ?? err).replace(/^SQLITE_[A-Z_]+: /, '').split('\n')[0]!;
}

function refusal(err: unknown, timeoutMs: number): DomainError {
  const code = sqliteCode(err);
  const message = sqliteMessage(err);
  if (code === 'SQLITE_INTERRUPT') return new DomainError('unprocessable', 'query_timeout', `query stopped after ${timeoutMs / 1000} s (raise --timeout)`);
  if (code === 'SQLITE_READONLY' || /too many attached databases/.test(message)) {
    return new DomainError('forbidden', 'store_read_only', `query refused: the capture store is opened read-only (${message})`);
  }
  return new DomainError('invalid', 'query_failed', `query failed: ${message}`);
}

export async function queryStore(dataDir: string, sql: string, opts: QueryOptions = {}): Promise<QueryResult> {
  if (isEmptySql(sql)) throw new InvalidInput('the query is empty', [{ field: 'sql', message: 'empty' }]);
  if (!isEmptySql(sql.slice(firstStatementEnd(sql)))) {
    throw new InvalidInput('one statement at a time: the query has more than one', [{ field: 'sql', message: 'several statements' }]);
  }
  const limit = opts.limit ?? 1000;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const store = await openStoreReadOnly(dataDir);
  if (!store) throw new DomainError('not_found', 'capture_store_missing', 'there is no capture store yet: no capture has been imported');
  const timer = setTimeout(() => store.db.interrupt(), timeoutMs);
  try {
    const stmt = await prepare(store.db, sql);
    try {
      const rows: StoreRow[] = [];
      let truncated = false;
      for (;;) {
        const row = await step<StoreRow>(stmt);
        if (row === undefined) break;
        if (rows.length === limit) {
          truncated = true;
          break;
        }
        rows.push(row);
      }
      return { columns: rows.length ? Object.keys(rows[0]!) : [], rows, truncated };
    } finally {
      await finalize(stmt);
    }
  } catch (err) {
    throw refusal(err, timeoutMs);
  } finally {
    clearTimeout(timer);
    await store.close();
  }
}
