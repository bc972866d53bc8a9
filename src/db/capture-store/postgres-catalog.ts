/**
 * The PostgreSQL store's catalog and physical tables, as the SQLite store's (sqlite-catalog.ts):
 * rigd_store_tables (every physical table, its name key and shape) and rigd_capture_tables (which
 * physical table and columns hold each capture table). Physical columns are jsonb (pg-values.ts).
 * Every function runs inside the caller's transaction.
 */
import type pg from 'pg';
import { CAPTURE_ID_COLUMN, quoteIdent } from './layout.ts';
import { captureIndexName, nameKey, place, type CatalogView, type MappedColumn, type Placement, type StoreBounds } from './placement.ts';

/** A table of the store schema as `schema.name`. */
export function qualified(schema: string, name: string): string {
  return `${quoteIdent(schema)}.${quoteIdent(name)}`;
}

/** Creates the catalog unless it exists; tables of the earlier layout are registered as legacy ones. */
export async function registerPgCatalog(client: pg.ClientBase, schema: string): Promise<void> {
  const { rows: has } = await client.query("SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'rigd_capture_tables'", [schema]);
  if (has.length > 0) return;
  const { rows: legacy } = await client.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' AND table_name NOT LIKE 'rigd\\_%'",
    [schema],
  );
  await client.query(`CREATE TABLE ${qualified(schema, 'rigd_store_tables')} (physical text PRIMARY KEY, key text NOT NULL, shape text NOT NULL, columns text NOT NULL)`);
  await client.query(`CREATE INDEX ON ${qualified(schema, 'rigd_store_tables')} (key, shape)`);
  await client.query(
    `CREATE TABLE ${qualified(schema, 'rigd_capture_tables')} (capture_id bigint NOT NULL, name text NOT NULL, physical text NOT NULL, columns text NOT NULL, rows bigint NOT NULL, PRIMARY KEY (capture_id, name))`,
  );
  await client.query(`CREATE INDEX ON ${qualified(schema, 'rigd_capture_tables')} (physical)`);
  for (const { name } of legacy) {
    const { rows: info } = await client.query<{ name: string; type: string }>(
      'SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position',
      [schema, name],
    );
    const cols = info.filter((c) => c.name !== CAPTURE_ID_COLUMN);
    await client.query(`INSERT INTO ${qualified(schema, 'rigd_store_tables')} VALUES ($1, $2, 'legacy', $3)`, [name, nameKey('postgres', name), JSON.stringify(cols.map((c) => c.name))]);
    const mapped: MappedColumn[] = cols.map((c) => ({ name: c.name, type: '', store: c.name }));
    await client.query(
      `INSERT INTO ${qualified(schema, 'rigd_capture_tables')} SELECT ${quoteIdent(CAPTURE_ID_COLUMN)}, $1, $1, $2, count(*) FROM ${qualified(schema, name)} GROUP BY 1`,
      [name, JSON.stringify(mapped)],
    );
  }
}

export function pgCatalogView(client: pg.ClientBase, schema: string): CatalogView {
  return {
    async find(key, shape) {
      const { rows } = await client.query<{ physical: string; columns: string }>(
        `SELECT physical, columns FROM ${qualified(schema, 'rigd_store_tables')} WHERE key = $1 AND shape = $2 LIMIT 1`,
        [key, shape],
      );
      const row = rows[0];
      return row ? { physical: row.physical, shape, columns: JSON.parse(row.columns) as string[] } : undefined;
    },
    async taken(physical) {
      const { rows } = await client.query('SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2', [schema, physical]);
      return rows.length > 0;
    },
  };
}

/** Removes every row a capture has in the store (the physical tables the catalog names); returns how many. */
export async function removePgCapture(client: pg.ClientBase, schema: string, captureId: number): Promise<number> {
  const { rows: held } = await client.query<{ physical: string }>(`SELECT DISTINCT physical FROM ${qualified(schema, 'rigd_capture_tables')} WHERE capture_id = $1`, [captureId]);
  let removed = 0;
  for (const { physical } of held) {
    removed += (await client.query(`DELETE FROM ${qualified(schema, physical)} WHERE ${quoteIdent(CAPTURE_ID_COLUMN)} = $1`, [captureId])).rowCount ?? 0;
  }
  await client.query(`DELETE FROM ${qualified(schema, 'rigd_capture_tables')} WHERE capture_id = $1`, [captureId]);
  return removed;
}

/**
 * Places a capture table and makes its physical table ready (created, or jsonb columns added). A table
 * it creates (p.create) has no index yet: the caller fills it, then calls indexPgTable, in this
 * transaction (no other transaction sees the table before COMMIT).
 */
export async function preparePgTable(client: pg.ClientBase, schema: string, table: { name: string; columns: readonly { name: string; type: string }[] }, bounds: StoreBounds): Promise<Placement> {
  const p = await place('postgres', table, pgCatalogView(client, schema), bounds);
  const catalog = qualified(schema, 'rigd_store_tables');
  if (p.create) {
    const cols = [`${quoteIdent(CAPTURE_ID_COLUMN)} bigint NOT NULL`, ...p.columns.map((c) => `${quoteIdent(c.store)} jsonb`)];
    // Its capture_id index comes after the rows (indexPgTable): one sort instead of a b-tree insert per row.
    await client.query(`CREATE TABLE ${qualified(schema, p.physical)} (${cols.join(', ')})`);
    await client.query(`INSERT INTO ${catalog} VALUES ($1, $2, $3, $4)`, [p.physical, nameKey('postgres', table.name), p.shape, JSON.stringify(p.columns.map((c) => c.store))]);
  } else if (p.add.length > 0) {
    await client.query(`ALTER TABLE ${qualified(schema, p.physical)} ${p.add.map((c) => `ADD COLUMN ${quoteIdent(c)} jsonb`).join(', ')}`);
    const { rows } = await client.query<{ columns: string }>(`SELECT columns FROM ${catalog} WHERE physical = $1`, [p.physical]);
    const columns = [...(JSON.parse(rows[0]!.columns) as string[]), ...p.add];
    await client.query(`UPDATE ${catalog} SET columns = $1 WHERE physical = $2`, [JSON.stringify(columns), p.physical]);
  }
  return p;
}

/** The capture_id index of a table preparePgTable created, once its rows are in. */
export async function indexPgTable(client: pg.ClientBase, schema: string, p: Placement): Promise<void> {
  if (!p.create) return;
  await client.query(`CREATE INDEX ${quoteIdent(captureIndexName(p.physical))} ON ${qualified(schema, p.physical)} (${quoteIdent(CAPTURE_ID_COLUMN)})`);
}

export async function recordPgCaptureTable(client: pg.ClientBase, schema: string, captureId: number, name: string, p: Placement, rows: number): Promise<void> {
  await client.query(`INSERT INTO ${qualified(schema, 'rigd_capture_tables')} VALUES ($1, $2, $3, $4, $5)`, [captureId, name, p.physical, JSON.stringify(p.columns), rows]);
}

/** Where one capture's table is, or null. */
export async function findPgCaptureTable(client: pg.ClientBase, schema: string, captureId: number, name: string): Promise<{ physical: string; columns: MappedColumn[] } | null> {
  const { rows } = await client.query<{ name: string; physical: string; columns: string }>(
    `SELECT name, physical, columns FROM ${qualified(schema, 'rigd_capture_tables')} WHERE capture_id = $1 AND lower(name) = lower($2)`,
    [captureId, name],
  );
  const row = rows.find((r) => r.name === name) ?? rows[0];
  return row ? { physical: row.physical, columns: JSON.parse(row.columns) as MappedColumn[] } : null;
}

/** First key of the advisory locks of imports (two-key form: capture locks and name locks). */
export const CAPTURE_LOCK_KEY = 0x72696764; // "rigd"
export const NAME_LOCK_KEY = 0x7269676e; // "rign"

/**
 * The locks one import takes, for its transaction: its capture (a second import of the same capture
 * waits), then each table name it writes or leaves (imports of other names run at the same time;
 * imports placing the same name take turns, so two never create or widen one table at once). Names
 * are locked in one order, so two imports never wait on each other in a cycle.
 */
export async function lockForImport(client: pg.ClientBase, schema: string, captureId: number, tables: readonly { name: string }[]): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock($1, ($2::bigint % 2147483647)::int)', [CAPTURE_LOCK_KEY, captureId]);
  const { rows } = await client.query<{ name: string }>(`SELECT DISTINCT name FROM ${qualified(schema, 'rigd_capture_tables')} WHERE capture_id = $1`, [captureId]);
  const keys = [...new Set([...tables.map((t) => nameKey('postgres', t.name)), ...rows.map((r) => nameKey('postgres', r.name))])].sort();
  for (const key of keys) await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [NAME_LOCK_KEY, key]);
}
