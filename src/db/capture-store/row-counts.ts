/**
 * Counting the capture store, built on its readers
 * (store-reader.ts): how many rows each capture has in a store table (the `capture_rows` check of
 * doctor and /healthz).
 */
import { isPostgresUrl } from '../database-url.ts';
import { quoteIdent } from './layout.ts';
import { openStoreReader, StoreQueryError, type StoreReader } from './store-reader.ts';

/** Rows per capture id in one store table. */
export type CaptureCounts = Map<number, number>;

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** The store's spelling of `table` (names are compared regardless of case), or null when it has none. */
async function storeTableName(store: StoreReader, postgres: boolean, table: string, timeoutMs: number): Promise<string | null> {
  const sql = postgres
    ? `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND lower(table_name) = lower(${literal(table)}) ORDER BY table_name LIMIT 1`
    : `SELECT name FROM sqlite_master WHERE type = 'table' AND name = ${literal(table)} COLLATE NOCASE LIMIT 1`;
  const { rows } = await store.query(sql, { limit: 1, timeoutMs });
  return rows.length ? String(rows[0]!.name) : null;
}

/**
 * Rows per capture in each of `tables` (by the capture's spelling, lower-cased in the answer), one
 * scan of each store table's capture_id index; null when the store does not exist at all. A table
 * the store lacks counts as empty.
 */
export async function captureRowCounts(dataDir: string, url: string, tables: string[], timeoutMs = 60_000): Promise<Map<string, CaptureCounts> | null> {
  const store = await openStoreReader(dataDir, url);
  if (!store) return null;
  const postgres = isPostgresUrl(url);
  const out = new Map<string, CaptureCounts>();
  try {
    for (const table of new Set(tables.map((t) => t.toLowerCase()))) {
      const counts: CaptureCounts = new Map();
      out.set(table, counts);
      const name = await storeTableName(store, postgres, table, timeoutMs);
      if (!name) continue;
      const { rows } = await store.query(`SELECT capture_id AS id, count(*) AS n FROM ${quoteIdent(name)} GROUP BY capture_id`, { limit: 10_000_000, timeoutMs });
      for (const r of rows) counts.set(Number(r.id), Number(r.n));
    }
    return out;
  } catch (err) {
    if (err instanceof StoreQueryError) throw new Error(`the capture store cannot be counted: ${err.message}`);
    throw err;
  } finally {
    await store.close();
  }
}
