/**
 * The capture store on PostgreSQL: a schema of its own (`rigd_captures`) in the service's database,
 * with the same layout as the SQLite file (layout.ts). Names are compared without regard to case, as
 * SQLite does: a table or column is looked up case-insensitively and the spelling of the capture that
 * first brought it is kept (quoted, so PostgreSQL keeps it as it is).
 *
 * Types follow the SQLite affinity of the declared type (layout.ts affinity()):
 *
 *   INTEGER -> bigint            REAL -> double precision      TEXT -> text
 *   NUMERIC, none (BLOB or no type) -> jsonb
 *
 * NUMERIC is jsonb, not numeric: SQLite's NUMERIC affinity (DATETIME, DATE, BOOLEAN, DECIMAL...)
 * keeps text that is not a number as text ('2024-03-01 12:00:00'), which numeric would refuse; text
 * that reads as a number becomes a JSON number, as SQLite converts it (integers past 2^53 stay their
 * digits, exactly). A column without a type keeps every value's own kind, as SQLite does: numbers and text as JSON
 * numbers and strings, blobs as {"base64": "..."} (a string is never an object, so a blob is told
 * apart), NULL as SQL NULL. PostgreSQL cannot hold a blob in a typed column, nor text in a number
 * column; such a value fails the import with a message naming the table and column.
 */
import type pg from 'pg';
import { CAPTURE_ID_COLUMN, affinity, captureIdIndexName, quoteIdent } from './layout.ts';
import type { StoreTable } from './writer.ts';

/** The schema the store lives in. */
export const CAPTURE_STORE_SCHEMA = 'rigd_captures';

/** The advisory lock every store writer takes for its transaction ("rigc" as a 32-bit number). */
export const STORE_LOCK_KEY = 0x72696763;

export type PgStoreType = 'bigint' | 'double precision' | 'text' | 'jsonb';

/** The PostgreSQL type of a store column declared `declared` by the capture. */
export function pgColumnType(declared: string): PgStoreType {
  switch (affinity(declared)) {
    case 'INTEGER':
      return 'bigint';
    case 'REAL':
      return 'double precision';
    case 'TEXT':
      return 'text';
    default:
      return 'jsonb';
  }
}

/** A table or column of the store schema as `schema.name`. */
export function qualified(schema: string, name: string): string {
  return `${quoteIdent(schema)}.${quoteIdent(name)}`;
}

/** Creates the store schema unless it exists (under the store lock: concurrent creates would clash). */
export async function ensureSchema(client: pg.ClientBase, schema: string): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [STORE_LOCK_KEY]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** The store's tables, by name. */
export async function pgStoreTables(client: pg.ClientBase, schema: string): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY table_name",
    [schema],
  );
  return rows.map((r) => r.name);
}

/** The store's spelling of `table` (any case), or null. */
export async function findPgTable(client: pg.ClientBase, schema: string, table: string): Promise<string | null> {
  const { rows } = await client.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' AND lower(table_name) = lower($2) ORDER BY table_name LIMIT 1",
    [schema, table],
  );
  return rows[0]?.name ?? null;
}

/** Columns of a store table in their order, with their types. */
export async function pgColumns(client: pg.ClientBase, schema: string, table: string): Promise<{ name: string; type: string }[]> {
  const { rows } = await client.query<{ name: string; type: string }>(
    'SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position',
    [schema, table],
  );
  return rows;
}

/**
 * Makes sure the store has a table for `table` with all its columns (inside the import's transaction).
 * Returns the store's name of the table and the store type of each of the capture's columns.
 */
export async function ensurePgTable(client: pg.ClientBase, schema: string, table: StoreTable): Promise<{ name: string; types: string[]; columns: string[] }> {
  const found = await findPgTable(client, schema, table.name);
  if (!found) {
    const defs = [`${quoteIdent(CAPTURE_ID_COLUMN)} bigint NOT NULL`, ...table.columns.map((c) => `${quoteIdent(c.name)} ${pgColumnType(c.type)}`)];
    await client.query(`CREATE TABLE ${qualified(schema, table.name)} (${defs.join(', ')})`);
    await client.query(`CREATE INDEX ${quoteIdent(captureIdIndexName(table.name))} ON ${qualified(schema, table.name)} (${quoteIdent(CAPTURE_ID_COLUMN)})`);
    return { name: table.name, types: table.columns.map((c) => pgColumnType(c.type)), columns: table.columns.map((c) => c.name) };
  }
  const have = new Map((await pgColumns(client, schema, found)).map((c) => [c.name.toLowerCase(), c]));
  const types: string[] = [];
  const columns: string[] = [];
  for (const c of table.columns) {
    const existing = have.get(c.name.toLowerCase());
    if (existing) {
      types.push(existing.type);
      columns.push(existing.name);
      continue;
    }
    const type = pgColumnType(c.type);
    await client.query(`ALTER TABLE ${qualified(schema, found)} ADD COLUMN ${quoteIdent(c.name)} ${type}`);
    have.set(c.name.toLowerCase(), { name: c.name, type });
    types.push(type);
    columns.push(c.name);
  }
  return { name: found, types, columns };
}
