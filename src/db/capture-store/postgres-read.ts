/**
 * Reading the PostgreSQL capture store (postgres-schema.ts) without ever writing to it. Every read
 * runs in a READ ONLY transaction on a connection of its own, with search_path set to the store
 * schema; the operator's query also gets a statement_timeout. PostgreSQL itself refuses a write
 * (25006 read_only_sql_transaction), DDL included.
 *
 * Values come back as on SQLite: bigint and numeric as numbers (their digits as text past 2^53),
 * double precision as numbers, text as strings, a jsonb value of a column without a type as the
 * number or string it holds or, for {"base64": ...}, the blob.
 */
import type pg from 'pg';
import { CAPTURE_ID_COLUMN, quoteIdent } from './layout.ts';
import { findPgCaptureTable } from './postgres-catalog.ts';
import { CAPTURE_STORE_SCHEMA, findPgTable, pgColumns, qualified } from './postgres-schema.ts';
import { decodeValue } from './pg-values.ts';
import { mapColumns, type MappedColumn } from './placement.ts';
import { connectStore } from './postgres-writer.ts';
import type { StoreRow, StoreValue } from './read.ts';
import { StoreQueryError, type StoreReader } from './store-reader.ts';

/** A value as the store's readers take it (StoreValue). */
export function storeValue(v: unknown): StoreValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' || typeof v === 'string' || Buffer.isBuffer(v)) return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? String(v) : v.toISOString();
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length === 1 && keys[0] === 'base64' && typeof o.base64 === 'string') return Buffer.from(o.base64, 'base64');
  }
  return JSON.stringify(v);
}

function queryError(err: unknown): StoreQueryError {
  const code = String((err as { code?: unknown }).code ?? '');
  const message = String((err as Error).message ?? err).split('\n')[0]!;
  if (code === '57014') return new StoreQueryError('timeout', message);
  if (code === '25006') return new StoreQueryError('read_only', message);
  return new StoreQueryError('failed', message);
}

/** Statements a cursor can run (the rest run as they are: writes are refused, others answer small). */
const CURSOR_STATEMENT = /^\s*(\(\s*)*(select|with|values|table)\b/i;

class PgStoreReader implements StoreReader {
  #closed = false;
  #busy = false;

  constructor(
    private readonly client: pg.Client,
    readonly file: string,
    private readonly schema: string,
  ) {}

  async #begin(timeoutMs?: number): Promise<void> {
    if (this.#busy) throw new Error('the capture store reader is busy');
    this.#busy = true;
    await this.client.query('BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    await this.client.query(`SET LOCAL search_path TO ${quoteIdent(this.schema)}`);
    if (timeoutMs !== undefined) await this.client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
    // A first query takes the snapshot: from here on the transaction cannot be made read-write.
    await this.client.query('SELECT 1');
  }

  async #end(): Promise<void> {
    await this.client.query('ROLLBACK').catch(() => undefined);
    this.#busy = false;
  }

  async columns(table: string, captureId?: number): Promise<string[] | null> {
    if (captureId !== undefined) {
      const found = await this.#locate(table, captureId);
      // A physical table removed behind the store's back holds nothing.
      const held = found && (await pgColumns(this.client, this.schema, found.physical)).length > 0;
      return held ? found.columns.map((c) => c.name) : null;
    }
    const name = await findPgTable(this.client, this.schema, table);
    if (!name) return null;
    return (await pgColumns(this.client, this.schema, name)).map((c) => c.name);
  }

  /** Where a capture's table is (catalog), or null. */
  async #locate(table: string, captureId: number): Promise<{ physical: string; columns: MappedColumn[] } | null> {
    return findPgCaptureTable(this.client, this.schema, captureId, table);
  }

  async *rows(table: string, columns: string[], captureId: number, pageSize = 500): AsyncGenerator<StoreValue[]> {
    const found = await this.#locate(table, captureId);
    if (!found) throw new Error(`the capture store holds no table ${table} of capture ${captureId}`);
    const physical = mapColumns(found.columns, columns, 'postgres');
    const types = new Map((await pgColumns(this.client, this.schema, found.physical)).map((c) => [c.name, c.type]));
    const jsonb = physical.map((c) => c !== null && types.get(c) === 'jsonb');
    const select = physical.map((c, i) => (c === null ? `NULL AS c${i}` : `${quoteIdent(c)}${jsonb[i] ? '::text' : ''} AS c${i}`)).join(', ');
    await this.#begin();
    try {
      await this.client.query(
        `DECLARE rigd_rows NO SCROLL CURSOR FOR SELECT ${select || 'NULL'} FROM ${qualified(this.schema, found.physical)} WHERE ${quoteIdent(CAPTURE_ID_COLUMN)} = $1 ORDER BY ctid`,
        [captureId],
      );
      for (;;) {
        const { rows } = await this.client.query<Record<string, unknown>>(`FETCH ${pageSize} FROM rigd_rows`);
        for (const row of rows) yield columns.map((_, i) => (jsonb[i] ? decodeValue(row[`c${i}`] as string | null) : storeValue(row[`c${i}`])));
        if (rows.length < pageSize) return;
      }
    } finally {
      await this.#end();
    }
  }

  async query(sql: string, { limit, timeoutMs }: { limit: number; timeoutMs: number }): Promise<{ rows: StoreRow[]; truncated: boolean }> {
    try {
      await this.#begin(timeoutMs);
      let raw: Record<string, unknown>[];
      if (CURSOR_STATEMENT.test(sql)) {
        await this.client.query(`DECLARE rigd_query NO SCROLL CURSOR FOR ${sql}`);
        raw = (await this.client.query<Record<string, unknown>>(`FETCH ${limit + 1} FROM rigd_query`)).rows;
      } else {
        raw = (await this.client.query<Record<string, unknown>>(sql)).rows ?? [];
      }
      const truncated = raw.length > limit;
      const rows = raw.slice(0, limit).map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, storeValue(v)])));
      return { rows, truncated };
    } catch (err) {
      throw queryError(err);
    } finally {
      await this.#end();
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.client.end().catch(() => undefined);
  }
}

/** The PostgreSQL store of database `url` for reading, or null when its schema does not exist yet. */
export async function openPgStoreReader(url: string, schema = CAPTURE_STORE_SCHEMA): Promise<StoreReader | null> {
  const { redactText } = await import('../database-url.ts');
  const client = await connectStore(url);
  try {
    const { rows } = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (rows.length === 0) {
      await client.end().catch(() => undefined);
      return null;
    }
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
  return new PgStoreReader(client, `${redactText(url)}#${schema}`, schema);
}
