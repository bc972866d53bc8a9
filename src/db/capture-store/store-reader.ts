/**
 * Reading the capture store whatever database holds it: export, the tables API and the operator's
 * query go through a StoreReader, opened from data_dir and database.url.
 *
 *   const store = await openStoreReader(config.data_dir, config.database.url);  // null: nothing imported yet
 *   await store.columns('frames');                         // the store's columns, any case, or null
 *   for await (const row of store.rows('frames', cols, 7)) ...
 *   await store.query('SELECT count(*) FROM frames', { limit: 1000, timeoutMs: 30000 });
 *   await store.close();
 *
 * SQLite: the file opened read-only (read.ts). PostgreSQL: the store schema (postgres-schema.ts) on a
 * connection of its own, every read in a READ ONLY transaction, so the server refuses any write.
 */
import { isPostgresUrl } from '../database-url.ts';
import { openPgStoreReader } from './postgres-read.ts';
import { captureRows, finalize, openStoreReadOnly, prepare, step, storeColumns, type StoreRow, type StoreValue } from './read.ts';

export interface StoreQueryOptions {
  limit: number;
  timeoutMs: number;
}

export interface StoreQueryRows {
  rows: StoreRow[];
  truncated: boolean;
}

/** Why a query failed: stopped by the timeout, refused as a write, or any other error. */
export class StoreQueryError extends Error {
  constructor(
    readonly reason: 'timeout' | 'read_only' | 'failed',
    message: string,
  ) {
    super(message);
  }
}

export interface StoreReader {
  /** Where the store is, for messages (the file, or the url without password and the schema). */
  readonly file: string;
  /**
   * With `captureId`: that capture's columns of `table` as it named them, or null when the store does
   * not hold them. Without: the columns of the store table named `table`, or null.
   */
  columns(table: string, captureId?: number): Promise<string[] | null>;
  /** One capture's rows of one table in insertion order, a page at a time, values in `columns` order. */
  rows(table: string, columns: string[], captureId: number, pageSize?: number): AsyncGenerator<StoreValue[]>;
  /** One statement, read-only, bounded; throws StoreQueryError. */
  query(sql: string, opts: StoreQueryOptions): Promise<StoreQueryRows>;
  close(): Promise<void>;
}

function sqliteQueryError(err: unknown): StoreQueryError {
  const code = String((err as { code?: unknown }).code ?? '');
  const message = String((err as Error).message ?? err).replace(/^SQLITE_[A-Z_]+: /, '').split('\n')[0]!;
  if (code === 'SQLITE_INTERRUPT') return new StoreQueryError('timeout', message);
  if (code === 'SQLITE_READONLY' || /too many attached databases/.test(message)) return new StoreQueryError('read_only', message);
  return new StoreQueryError('failed', message);
}

async function openSqliteStoreReader(dataDir: string): Promise<StoreReader | null> {
  const store = await openStoreReadOnly(dataDir);
  if (!store) return null;
  const { db } = store;
  return {
    file: store.file,
    columns: (table, captureId) => storeColumns(db, table, captureId),
    rows: (table, columns, captureId, pageSize) => captureRows(db, table, columns, captureId, pageSize),
    async query(sql, { limit, timeoutMs }) {
      const timer = setTimeout(() => db.interrupt(), timeoutMs);
      try {
        const stmt = await prepare(db, sql);
        try {
          const rows: StoreRow[] = [];
          for (;;) {
            const row = await step<StoreRow>(stmt);
            if (row === undefined) return { rows, truncated: false };
            if (rows.length === limit) return { rows, truncated: true };
            rows.push(row);
          }
        } finally {
          await finalize(stmt);
        }
      } catch (err) {
        throw sqliteQueryError(err);
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => store.close(),
  };
}

/** The capture store opened for reading: PostgreSQL's when `url` names one, else data_dir's file; null when none exists yet. */
export function openStoreReader(dataDir: string, url?: string): Promise<StoreReader | null> {
  return isPostgresUrl(url) ? openPgStoreReader(url) : openSqliteStoreReader(dataDir);
}
