/**
 * Counting the capture store, built on its readers (store-reader.ts): how many rows each capture has
 * of each of its tables (the `capture_rows` check of doctor and /healthz). The catalog
 * (rigd_capture_tables) says which store table holds each capture's table; each of those store tables
 * is counted once (one scan of its capture_id index), and a store table the catalog names but the
 * store lacks counts as empty. A store of the earlier layout that no writer has opened yet (no
 * catalog) is counted by table name, as that layout kept it.
 */
import { isPostgresUrl } from '../database-url.ts';
import { quoteIdent } from './layout.ts';
import { CATALOG_TABLES } from './placement.ts';
import { openStoreReader, StoreQueryError, type StoreReader } from './store-reader.ts';

/** Rows per table name (as the catalog records it) of one capture. */
export type CaptureCounts = Map<string, number>;

const LIMIT = 10_000_000;

/** The store's tables, by exact name. */
async function storeTables(store: StoreReader, postgres: boolean, timeoutMs: number): Promise<Set<string>> {
  const sql = postgres
    ? "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
    : "SELECT name FROM sqlite_master WHERE type = 'table'";
  const { rows } = await store.query(sql, { limit: LIMIT, timeoutMs });
  return new Set(rows.map((r) => String(r.name)));
}

/** Which store table holds each capture table: the catalog's rows, or one per store table without it. */
async function placements(store: StoreReader, tables: Set<string>, ids: Set<number>, timeoutMs: number): Promise<{ id: number; name: string; physical: string }[]> {
  if (tables.has('rigd_capture_tables')) {
    const { rows } = await store.query('SELECT capture_id AS id, name, physical FROM rigd_capture_tables', { limit: LIMIT, timeoutMs });
    return rows.map((r) => ({ id: Number(r.id), name: String(r.name), physical: String(r.physical) })).filter((r) => ids.has(r.id));
  }
  const out: { id: number; name: string; physical: string }[] = [];
  for (const name of tables) {
    if (name.startsWith('sqlite_') || (CATALOG_TABLES as readonly string[]).includes(name)) continue;
    // Every capture of this table, named as the store names it (the earlier layout: one table per name).
    out.push({ id: -1, name, physical: name });
  }
  return out;
}

/**
 * Rows of each capture of `ids` per table (by the name the catalog records for it); null when the
 * store does not exist at all. A capture with no row in the store has no entry.
 */
export async function captureRowCounts(dataDir: string, url: string, ids: number[], timeoutMs = 60_000): Promise<Map<number, CaptureCounts> | null> {
  const store = await openStoreReader(dataDir, url);
  if (!store) return null;
  const postgres = isPostgresUrl(url);
  const wanted = new Set(ids);
  const out = new Map<number, CaptureCounts>();
  const add = (id: number, name: string, n: number) => {
    if (!wanted.has(id)) return;
    if (!out.has(id)) out.set(id, new Map());
    const counts = out.get(id)!;
    counts.set(name, (counts.get(name) ?? 0) + n);
  };
  try {
    const tables = await storeTables(store, postgres, timeoutMs);
    const placed = await placements(store, tables, wanted, timeoutMs);
    const physical = [...new Set(placed.map((p) => p.physical))].filter((p) => tables.has(p));
    const counted = new Map<string, Map<number, number>>();
    for (const name of physical) {
      const { rows } = await store.query(`SELECT capture_id AS id, count(*) AS n FROM ${quoteIdent(name)} GROUP BY capture_id`, { limit: LIMIT, timeoutMs });
      counted.set(name, new Map(rows.map((r) => [Number(r.id), Number(r.n)])));
    }
    for (const p of placed) {
      const counts = counted.get(p.physical);
      if (p.id === -1) for (const [id, n] of counts ?? []) add(id, p.name, n);
      else add(p.id, p.name, counts?.get(p.id) ?? 0);
    }
    return out;
  } catch (err) {
    if (err instanceof StoreQueryError) throw new Error(`the capture store cannot be counted: ${err.message}`);
    throw err;
  } finally {
    await store.close();
  }
}

/** A capture's rows of `table`: the name as recorded, else the same name in another case (a store of the earlier layout spells it its way). */
export function rowsOf(counts: Map<number, CaptureCounts> | null, id: number, table: string): number {
  const mine = counts?.get(id);
  if (!mine) return 0;
  const exact = mine.get(table);
  if (exact !== undefined) return exact;
  const lower = table.toLowerCase();
  for (const [name, n] of mine) if (name.toLowerCase() === lower) return n;
  return 0;
}
