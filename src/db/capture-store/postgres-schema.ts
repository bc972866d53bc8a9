/**
 * The capture store on PostgreSQL: a schema of its own (`rigd_captures`) in the service's database,
 * laid out as the SQLite store (placement.ts, the catalog of postgres-catalog.ts): physical tables of
 * `capture_id bigint NOT NULL` and one jsonb column per capture column, whose values carry their
 * SQLite storage class (pg-values.ts). Names are PostgreSQL's quoted identifiers, compared exactly.
 * Stores of the earlier layout (typed columns, no catalog) are registered as legacy tables on first
 * open and stay readable.
 */
import type pg from 'pg';
import { quoteIdent } from './layout.ts';
import { qualified, registerPgCatalog } from './postgres-catalog.ts';

export { qualified };

/** The schema the store lives in. */
export const CAPTURE_STORE_SCHEMA = 'rigd_captures';

/** The advisory lock every store writer takes for its transaction ("rigc" as a 32-bit number). */
export const STORE_LOCK_KEY = 0x72696763;


/** Creates the store schema and its catalog unless they exist (under the store lock: concurrent creates would clash). */
export async function ensureSchema(client: pg.ClientBase, schema: string): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [STORE_LOCK_KEY]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    await registerPgCatalog(client, schema);
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

