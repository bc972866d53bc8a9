/**
 * The PostgreSQL capture store's writer (CaptureStoreWriter): the store schema (postgres-schema.ts)
 * of the database that database.url names, on one connection of its own, one import at a time.
 *
 *   const store = await openPgCaptureStore(url);
 *   await store.replace(captureId, tables, batches);
 *   await store.close();
 *
 * replace = BEGIN; advisory locks on the capture and on the table names it writes (lockForImport:
 * imports of other captures and other names run at once, two never widen one table together); DELETE the capture's rows from the tables the catalog says
 * it has; place each table (placement.ts) and create it or add jsonb columns; multi-row INSERTs of
 * class-carrying jsonb values (pg-values.ts) with bound parameters (under PostgreSQL's 65535); record
 * the catalog rows; the caller's beforeCommit (the ingester checks its job lease there, in this
 * transaction); COMMIT. Anything thrown on the way (by the batches too) rolls back; a process killed mid-import
 * loses its connection and the server rolls its transaction back, leaving the previous rows.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { redactText } from '../database-url.ts';
import { HealingClient } from '../dialect/postgres/healing-client.ts';
import { CAPTURE_ID_COLUMN, quoteIdent } from './layout.ts';
import { DEFAULT_BOUNDS, type Placement, type StoreBounds } from './placement.ts';
import { lockForImport, preparePgTable, recordPgCaptureTable, removePgCapture } from './postgres-catalog.ts';
import { CAPTURE_STORE_SCHEMA, ensureSchema, qualified } from './postgres-schema.ts';
import { encodeValue } from './pg-values.ts';
import { inTurn } from './turns.ts';
import type { CaptureStoreWriter, ReplaceOptions, ReplaceProgress, ReplaceResult, RowBatch, StoreTable } from './writer.ts';

/** Bind parameters of one statement at most (PostgreSQL's protocol counts them in 16 bits). */
export const MAX_PARAMETERS = 65_535;
/** Rows per INSERT statement at most. */
export const MAX_ROWS_PER_STATEMENT = 500;

export function pgRowsPerStatement(columns: number): number {
  return Math.max(1, Math.min(MAX_ROWS_PER_STATEMENT, Math.floor(MAX_PARAMETERS / (columns + 1))));
}

/** A pg client that reads int8 and numeric exactly: numbers when JavaScript holds them, else their digits. */
export function storeClient(url: string, name = 'rigd capture store'): pg.Client {
  const exact = (text: string): number | string => {
    const n = Number(text);
    return Number.isSafeInteger(n) || (!Number.isInteger(n) && Number.isFinite(n)) ? n : text;
  };
  return new pg.Client({
    connectionString: url,
    application_name: name,
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
        if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return exact;
        return pg.types.getTypeParser(oid, format);
      }) as typeof pg.types.getTypeParser,
    },
  });
}

/** Connects a store client; the message never carries the password. */
export async function connectStore(url: string, name?: string): Promise<pg.Client> {
  const client = storeClient(url, name);
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw new Error(`cannot connect to the capture store's database: ${redactText((err as Error).message ?? String(err))}`);
  }
  return client;
}

class PgInserter {
  readonly #head: string;
  readonly per: number;
  readonly #names = new Map<number, string>();

  constructor(
    private readonly client: pg.Client,
    schema: string,
    private readonly table: StoreTable,
    storeName: string,
    storeColumns: string[],
  ) {
    const cols = [CAPTURE_ID_COLUMN, ...storeColumns].map(quoteIdent).join(', ');
    this.#head = `INSERT INTO ${qualified(schema, storeName)} (${cols}) VALUES `;
    this.per = pgRowsPerStatement(table.columns.length);
  }

  /** The statement of a full run, built once (a shorter run's is built when needed, not kept). */
  #full: { text: string; name: string } | undefined;

  #sql(rows: number): { text: string; name: string } {
    if (rows === this.per && this.#full) return this.#full;
    const width = this.table.columns.length + 1;
    const tuples: string[] = [];
    for (let r = 0; r < rows; r++) {
      const p: string[] = [];
      for (let c = 0; c < width; c++) p.push(c === 0 ? `$${r * width + c + 1}` : `$${r * width + c + 1}::jsonb`);
      tuples.push(`(${p.join(', ')})`);
    }
    const text = this.#head + tuples.join(', ');
    let name = this.#names.get(rows);
    if (!name) {
      name = `rigd_store_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
      this.#names.set(rows, name);
    }
    if (rows === this.per) this.#full = { text, name };
    return { text, name };
  }

  async insert(captureId: number, rows: unknown[][], classes?: string[]): Promise<void> {
    const width = this.table.columns.length;
    for (let start = 0; start < rows.length; start += this.per) {
      const chunk = rows.slice(start, start + this.per);
      const params: unknown[] = [];
      for (let r = 0; r < chunk.length; r++) {
        const row = chunk[r]!;
        if (!Array.isArray(row) || row.length !== width) {
          throw new Error(`a row of ${this.table.name} has ${Array.isArray(row) ? row.length : 'no'} values, not ${width}`);
        }
        const cls = classes?.[start + r];
        params.push(captureId);
        for (let i = 0; i < width; i++) params.push(encodeValue(row[i], cls?.[i]));
      }
      const { text, name } = this.#sql(chunk.length);
      try {
        await this.client.query({ text, name: chunk.length === this.per ? name : undefined, values: params });
      } catch (err) {
        throw new Error(`capture store table ${this.table.name}: ${(err as Error).message}`);
      }
    }
  }
}

export class PgCaptureStore implements CaptureStoreWriter {
  #closed = false;

  private constructor(
    /** The store's connection: it comes back by itself after a restart or failover (/healthz: capture_store). */
    private readonly connection: HealingClient,
    /** Where the store is, for messages: the url without its password and the schema. */
    readonly file: string,
    readonly schema: string,
    readonly bounds: StoreBounds,
  ) {}

  /** Connects to database `url` and creates the store schema on first use. */
  static async open(url: string, schema = CAPTURE_STORE_SCHEMA, bounds: StoreBounds = DEFAULT_BOUNDS): Promise<PgCaptureStore> {
    const connection = new HealingClient('capture_store', () => storeClient(url));
    try {
      await ensureSchema(await connection.client().catch((err: Error) => Promise.reject(new Error(`cannot connect to the capture store's database: ${redactText(err.message)}`))), schema);
    } catch (err) {
      await connection.close();
      throw err;
    }
    return new PgCaptureStore(connection, `${redactText(url)}#${schema}`, schema, bounds);
  }

  replace(
    captureId: number,
    tables: readonly StoreTable[],
    batches: AsyncIterable<RowBatch>,
    onProgress?: (p: ReplaceProgress) => void,
    opts: ReplaceOptions = {},
  ): Promise<ReplaceResult> {
    if (!Number.isSafeInteger(captureId)) return Promise.reject(new Error(`capture id ${captureId} is not an integer`));
    return inTurn(this.file, () => this.#replace(captureId, tables, batches, onProgress, opts));
  }

  async #replace(
    captureId: number,
    tables: readonly StoreTable[],
    batches: AsyncIterable<RowBatch>,
    onProgress: ((p: ReplaceProgress) => void) | undefined,
    opts: ReplaceOptions,
  ): Promise<ReplaceResult> {
    if (this.#closed) throw new Error('the capture store is closed');
    const c = await this.connection.client();
    const inserters = new Map<string, PgInserter>();
    const counts = new Map<string, number>();
    const placements = new Map<string, Placement>();
    let replaced = 0;
    await c.query('BEGIN');
    try {
      await lockForImport(c, this.schema, captureId, tables);
      replaced = await removePgCapture(c, this.schema, captureId);
      for (const table of tables) {
        const p = await preparePgTable(c, this.schema, table, this.bounds);
        placements.set(table.name, p);
        inserters.set(table.name, new PgInserter(c, this.schema, table, p.physical, p.columns.map((x) => x.store)));
        counts.set(table.name, 0);
      }
      const progress: ReplaceProgress = { rows: 0, bytes: 0, table: '' };
      for await (const batch of batches) {
        const inserter = inserters.get(batch.table);
        if (!inserter) throw new Error(`rows for table ${JSON.stringify(batch.table)}, which the import did not announce`);
        await inserter.insert(captureId, batch.rows, batch.classes);
        counts.set(batch.table, counts.get(batch.table)! + batch.rows.length);
        progress.rows += batch.rows.length;
        progress.bytes += batch.bytes;
        progress.table = batch.table;
        onProgress?.({ ...progress });
      }
      for (const table of tables) await recordPgCaptureTable(c, this.schema, captureId, table.name, placements.get(table.name)!, counts.get(table.name)!);
      await opts.beforeCommit?.(async (text, values) => (await c.query(text, values)).rowCount ?? 0);
      await c.query('COMMIT');
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
    return { rows: counts, replaced };
  }

  /** Closes the connection once the import in progress (if any) has ended. */
  async close(): Promise<void> {
    await inTurn(this.file, async () => {
      if (this.#closed) return;
      this.#closed = true;
      await this.connection.close();
    });
  }
}

/** Opens the PostgreSQL capture store (schema rigd_captures of the database `url`) for imports. */
export function openPgCaptureStore(url: string, schema?: string, bounds?: StoreBounds): Promise<PgCaptureStore> {
  return PgCaptureStore.open(url, schema, bounds);
}
