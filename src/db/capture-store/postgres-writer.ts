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
 * it has; place each table (placement.ts) and create it or add jsonb columns; the rows by COPY FROM
 * STDIN (pg-copy.ts: class-carrying jsonb values of pg-values.ts in COPY's text format, streamed with
 * backpressure); the capture_id index of each table created here (built once its rows are in);
 * record the catalog rows; the caller's beforeCommit (the ingester checks its job lease there, in
 * this transaction); COMMIT. Anything thrown on the way (by the batches too) rolls back; a process killed mid-import
 * loses its connection and the server rolls its transaction back, leaving the previous rows.
 */
import pg from 'pg';
import { redactText } from '../database-url.ts';
import { HealingClient } from '../dialect/postgres/healing-client.ts';
import { DEFAULT_BOUNDS, type Placement, type StoreBounds } from './placement.ts';
import { indexPgTable, lockForImport, preparePgTable, recordPgCaptureTable, removePgCapture } from './postgres-catalog.ts';
import { CAPTURE_STORE_SCHEMA, ensureSchema, qualified } from './postgres-schema.ts';
import { PgCopy, type CopyTarget } from './pg-copy.ts';
import { inTurn } from './turns.ts';
import type { CaptureStoreWriter, ReplaceOptions, ReplaceProgress, ReplaceResult, RowBatch, StoreTable } from './writer.ts';

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

/** The capture store's server could not be reached (or refused the login): not a matter of the schema's rights. */
export class StoreUnreachable extends Error {}

/** Connects a store client; the message never carries the password. */
export async function connectStore(url: string, name?: string): Promise<pg.Client> {
  const client = storeClient(url, name);
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw new StoreUnreachable(`cannot connect to the capture store's database: ${redactText((err as Error).message ?? String(err))}`);
  }
  return client;
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
    const targets = new Map<string, CopyTarget>();
    const counts = new Map<string, number>();
    const placements = new Map<string, Placement>();
    let replaced = 0;
    const copy = new PgCopy(c, captureId);
    await c.query('BEGIN');
    try {
      await lockForImport(c, this.schema, captureId, tables);
      replaced = await removePgCapture(c, this.schema, captureId);
      for (const table of tables) {
        const p = await preparePgTable(c, this.schema, table, this.bounds);
        placements.set(table.name, p);
        targets.set(table.name, { name: table.name, qualified: qualified(this.schema, p.physical), storeColumns: p.columns.map((x) => x.store) });
        counts.set(table.name, 0);
      }
      const progress: ReplaceProgress = { rows: 0, bytes: 0, table: '' };
      for await (const batch of batches) {
        const target = targets.get(batch.table);
        if (!target) throw new Error(`rows for table ${JSON.stringify(batch.table)}, which the import did not announce`);
        await copy.write(target, batch.rows, batch.classes);
        counts.set(batch.table, counts.get(batch.table)! + batch.rows.length);
        progress.rows += batch.rows.length;
        progress.bytes += batch.bytes;
        progress.table = batch.table;
        onProgress?.({ ...progress });
      }
      await copy.end();
      for (const p of placements.values()) await indexPgTable(c, this.schema, p);
      for (const table of tables) await recordPgCaptureTable(c, this.schema, captureId, table.name, placements.get(table.name)!, counts.get(table.name)!);
      await opts.beforeCommit?.(async (text, values) => (await c.query(text, values)).rowCount ?? 0);
      await c.query('COMMIT');
    } catch (err) {
      await copy.abort(err as Error);
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
