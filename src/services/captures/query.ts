/**
 * `rigd captures query SQL`: the operator's SQL over the capture store, on the box. The store is
 * opened read-only (SQLite: SQLITE_OPEN_READONLY, query_only, no ATTACH; PostgreSQL: a READ ONLY
 * transaction with search_path set to the store schema), so the database itself refuses any write. Bounded: at most `limit` rows are read (one more tells whether there were more) and the
 * statement is interrupted after `timeoutMs`. One statement at a time: a text with more is refused.
 */
import type { StoreRow } from '../../db/capture-store/read.ts';
import { openStoreReader, StoreQueryError } from '../../db/capture-store/store-reader.ts';
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

function refusal(err: unknown, timeoutMs: number): DomainError {
  if (!(err instanceof StoreQueryError)) return new DomainError('invalid', 'query_failed', `query failed: ${String((err as Error).message ?? err).split('\n')[0]}`);
  if (err.reason === 'timeout') return new DomainError('unprocessable', 'query_timeout', `query stopped after ${timeoutMs / 1000} s (raise --timeout)`);
  if (err.reason === 'read_only') return new DomainError('forbidden', 'store_read_only', `query refused: the capture store is opened read-only (${err.message})`);
  return new DomainError('invalid', 'query_failed', `query failed: ${err.message}`);
}

export async function queryStore(dataDir: string, sql: string, opts: QueryOptions = {}, databaseUrl = ''): Promise<QueryResult> {
  if (isEmptySql(sql)) throw new InvalidInput('the query is empty', [{ field: 'sql', message: 'empty' }]);
  if (!isEmptySql(sql.slice(firstStatementEnd(sql)))) {
    throw new InvalidInput('one statement at a time: the query has more than one', [{ field: 'sql', message: 'several statements' }]);
  }
  const limit = opts.limit ?? 1000;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const store = await openStoreReader(dataDir, databaseUrl);
  if (!store) throw new DomainError('not_found', 'capture_store_missing', 'there is no capture store yet: no capture has been imported');
  try {
    const { rows, truncated } = await store.query(sql, { limit, timeoutMs });
    return { columns: rows.length ? Object.keys(rows[0]!) : [], rows, truncated };
  } catch (err) {
    throw refusal(err, timeoutMs);
  } finally {
    await store.close();
  }
}
