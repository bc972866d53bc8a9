/**
 * Where a capture's table goes in the store: the physical layout's one rule, for both engines.
 *
 * A capture table's rows go to the SHARED table of its name (named as the capture spells it, so
 * `SELECT ... FROM frames` reads every capture of that shape) when the capture fits it: it adds at
 * most `maxNewSharedColumns` columns and leaves the shared table at most `maxSharedColumns` wide.
 * Otherwise they go to a table of their OWN SHAPE, keyed by the table name and a hash of its column
 * names (`frames~3f2a...`): captures of the same unusual shape share it, and no capture ever widens
 * a table beyond the bounds. Tables wider than `maxColumns` or captures with more than `maxTables`
 * tables are refused before anything is written (too_wide, too_many_tables).
 *
 * Names are compared as the database compares them: SQLite folds ASCII letters only ("Kind" and
 * "kind" are one name, "\u212Aind" and "kind" are two), PostgreSQL's quoted identifiers are exact.
 * A name the database cannot hold as it is (PostgreSQL: over 63 bytes) gets a hashed physical name;
 * the catalog (rigd_capture_tables) maps every capture's table and columns to what holds them.
 */
import { createHash } from 'node:crypto';
import { forEngine } from '../dialect/engine.ts';

export type StoreEngine = 'sqlite' | 'postgres';

/** Per-capture bounds (config `captures.*`). */
export interface StoreBounds {
  /** Most plain tables a capture may have (too_many_tables beyond). */
  maxTables: number;
  /** Most columns a capture table may have (too_wide beyond). */
  maxColumns: number;
  /** Most new columns one capture table may add to a shared table (beyond: a table of its own shape). */
  maxNewSharedColumns: number;
  /** Widest a shared table may grow (beyond: a table of its own shape). */
  maxSharedColumns: number;
}

export const DEFAULT_BOUNDS: Readonly<StoreBounds> = Object.freeze({ maxTables: 1000, maxColumns: 1000, maxNewSharedColumns: 32, maxSharedColumns: 256 });

/** The catalog's tables in the store (never a capture's physical table). */
export const CATALOG_TABLES = ['rigd_store_tables', 'rigd_capture_tables'] as const;

/** A name as the engine compares identifiers: SQLite folds ASCII only; PostgreSQL (quoted) is exact. */
export function nameKey(engine: StoreEngine, name: string): string {
  return forEngine(engine, { sqlite: name.replace(/[A-Z]+/g, (s) => s.toLowerCase()), postgres: name });
}

/** Whether the engine can hold `name` as an identifier as it is. */
export function holdable(engine: StoreEngine, name: string): boolean {
  if (name.includes('\u0000')) return false;
  return forEngine(engine, { sqlite: true, postgres: Buffer.byteLength(name, 'utf8') <= 63 });
}

function hash(parts: readonly string[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\u0000');
  return h.digest('hex').slice(0, 16);
}

/** The shape of a capture table: its name and column names as the engine compares them, hashed. */
export function shapeOf(engine: StoreEngine, table: { name: string; columns: readonly { name: string }[] }): string {
  return hash([nameKey(engine, table.name), ...table.columns.map((c) => nameKey(engine, c.name))]);
}

/** The name of a store table's index on capture_id. */
export function captureIndexName(physical: string): string {
  return `rigd_ix_${hash([physical])}`;
}

/** A physical table as the catalog records it. */
export interface PhysicalTable {
  physical: string;
  /** '' for the shared table of its name; else the shape hash; 'legacy' for tables of the old layout. */
  shape: string;
  /** Its columns (capture_id not among them), in order. */
  columns: string[];
}

/** A capture column and the physical column holding it. */
export interface MappedColumn {
  name: string;
  /** Declared type, as the capture wrote it (metadata; the store keeps each value's own class). */
  type: string;
  store: string;
}

export interface Placement {
  physical: string;
  shape: string;
  /** Create the table with `columns`' store names. */
  create: boolean;
  /** Physical columns to add to an existing table. */
  add: string[];
  columns: MappedColumn[];
}

export interface CatalogView {
  /** The table of (name key, shape) ('' = shared), if any. */
  find(key: string, shape: string): Promise<PhysicalTable | undefined>;
  /** Whether a relation (table or index) of that name exists, as the engine compares names. */
  taken(physical: string): Promise<boolean>;
}

/** Where `table` goes (bounds on width and table count are checked before). */
export async function place(engine: StoreEngine, table: { name: string; columns: readonly { name: string; type: string }[] }, catalog: CatalogView, bounds: StoreBounds): Promise<Placement> {
  const key = nameKey(engine, table.name);
  const allHoldable = table.columns.every((c) => holdable(engine, c.name));
  const shared = await catalog.find(key, '');
  if (shared && allHoldable) {
    const have = new Map(shared.columns.map((c) => [nameKey(engine, c), c]));
    const add = table.columns.filter((c) => !have.has(nameKey(engine, c.name))).map((c) => c.name);
    if (add.length <= bounds.maxNewSharedColumns && shared.columns.length + add.length <= bounds.maxSharedColumns) {
      for (const c of add) have.set(nameKey(engine, c), c);
      const columns = table.columns.map((c) => ({ name: c.name, type: c.type, store: have.get(nameKey(engine, c.name))! }));
      return { physical: shared.physical, shape: '', create: false, add, columns };
    }
  } else if (!shared && allHoldable && table.columns.length <= bounds.maxSharedColumns && holdable(engine, table.name) && !(await catalog.taken(table.name))) {
    return { physical: table.name, shape: '', create: true, add: [], columns: table.columns.map((c) => ({ ...c, store: c.name })) };
  }
  const shape = shapeOf(engine, table);
  const own = await catalog.find(key, shape);
  const columns = table.columns.map((c, i) => ({ name: c.name, type: c.type, store: allHoldable ? c.name : `c${i + 1}` }));
  if (own) return { physical: own.physical, shape, create: false, add: [], columns: columns.map((c, i) => ({ ...c, store: own.columns[i]! })) };
  let physical = `${table.name}~${shape}`;
  if (!holdable(engine, physical) || (await catalog.taken(physical))) physical = `t~${shape}`;
  for (let n = 2; await catalog.taken(physical); n++) physical = `t~${shape}~${n}`;
  return { physical, shape, create: true, add: [], columns };
}

/** The physical column of each of `columns` (capture names), exact first, then folded as SQLite does. */
export function mapColumns(mapped: readonly MappedColumn[], columns: readonly string[], engine: StoreEngine): (string | null)[] {
  const exact = new Map(mapped.map((c) => [c.name, c.store]));
  const folded = new Map(mapped.map((c) => [nameKey(engine, c.name), c.store]));
  return columns.map((c) => exact.get(c) ?? folded.get(nameKey(engine, c)) ?? null);
}
