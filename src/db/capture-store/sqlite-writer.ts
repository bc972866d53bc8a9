/**
 * The SQLite capture store's writer (CaptureStoreWriter): one connection, one import at a time.
 *
 *   const store = await openCaptureStore(dataDir);
 *   await store.replace(captureId, tables, batches);
 *   await store.close();
 *
 * replace = BEGIN IMMEDIATE; DELETE the capture's rows from the tables the catalog says it has (no
 * others); place each table (placement.ts: the shared table, or one of its own shape) and create it
 * or add columns; multi-row INSERTs (as many rows per statement as SQLite's variable limit allows);
 * record the capture's tables in the catalog; COMMIT. (An import copies in the engine instead, in
 * the capture child: sqlite-copy.ts; this path serves copies between stores.)
 * Anything thrown on the way (by the batches too) rolls back; a process killed mid-import leaves an
 * uncommitted WAL tail that SQLite discards, so the store holds the capture's rows as before.
 */
import type sqlite3 from 'sqlite3';
import { CAPTURE_ID_COLUMN, quoteIdent } from './layout.ts';
import { DEFAULT_BOUNDS, type Placement, type StoreBounds } from './placement.ts';
import { ensureCatalog, prepareTable, recordCaptureTable, removeCapture } from './sqlite-catalog.ts';
import { closeDatabase, openStoreFile, run } from './sqlite-file.ts';
import { inTurn } from './turns.ts';
import type { CaptureStoreWriter, ReplaceOptions, EngineCopyTarget, ReplaceProgress, ReplaceResult, RowBatch, StoreTable } from './writer.ts';

/** SQLITE_MAX_VARIABLE_NUMBER of SQLite 3.32 and later. */
export const MAX_VARIABLES = 32766;
/** Rows per INSERT statement at most (longer statements gain nothing). */
export const MAX_ROWS_PER_STATEMENT = 500;

/**
 * Rows per INSERT for a table of `columns` capture columns: each value takes two variables (its class
 * and itself), capture_id one.
 */
export function rowsPerStatement(columns: number): number {
  return Math.max(1, Math.min(MAX_ROWS_PER_STATEMENT, Math.floor(MAX_VARIABLES / (2 * columns + 1))));
}

/** A value's class letter from its JavaScript type, when the source did not say (as pg-values.ts infers it). */
function classOf(v: unknown): string {
  if (v === null || v === undefined) return 'n';
  if (typeof v === 'number') return Number.isInteger(v) ? 'i' : 'r';
  if (typeof v === 'bigint') return 'i';
  if (typeof v === 'string') return 't';
  return 'b';
}

function prepare(db: sqlite3.Database, sql: string): Promise<sqlite3.Statement> {
  return new Promise((resolve, reject) => {
    const stmt: sqlite3.Statement = db.prepare(sql, (err) => (err ? reject(err) : resolve(stmt)));
  });
}

function runStatement(stmt: sqlite3.Statement, params: unknown[]): Promise<void> {
  return new Promise((resolve, reject) => stmt.run(params, (err: Error | null) => (err ? reject(err) : resolve())));
}

function finalize(stmt: sqlite3.Statement): Promise<void> {
  return new Promise((resolve) => stmt.finalize(() => resolve()));
}

/** INSERT statements of one table: one for full runs, prepared once, and one per shorter run. */
class TableInserter {
  readonly #statements = new Map<number, sqlite3.Statement>();
  readonly #head: string;
  readonly #width: number;
  readonly per: number;

  constructor(
    private readonly db: sqlite3.Database,
    storeName: string,
    private readonly table: StoreTable,
    storeColumns: string[],
  ) {
    const cols = [CAPTURE_ID_COLUMN, ...storeColumns].map(quoteIdent).join(', ');
    this.#head = `INSERT INTO main.${quoteIdent(storeName)} (${cols}) VALUES `;
    // node-sqlite3 binds a JavaScript number as an integer when it fits 32 bits, else as a real, and
    // an integer past 2^53 comes as its digits: each value is cast to the class it had.
    this.#width = table.columns.length;
    this.per = rowsPerStatement(table.columns.length);
  }

  async #statement(rows: number): Promise<sqlite3.Statement> {
    let stmt = this.#statements.get(rows);
    if (!stmt) {
      const w = this.#width;
      const tuples: string[] = [];
      for (let r = 0; r < rows; r++) {
        const p = r * (2 * w + 1);
        const values = [`?${p + 1}`];
        for (let j = 0; j < w; j++) {
          const c = `?${p + 2 + 2 * j}`;
          const v = `?${p + 3 + 2 * j}`;
          values.push(`CASE ${c} WHEN 'i' THEN CAST(${v} AS INTEGER) WHEN 'r' THEN CAST(${v} AS REAL) ELSE ${v} END`);
        }
        tuples.push(`(${values.join(', ')})`);
      }
      stmt = await prepare(this.db, this.#head + tuples.join(', '));
      this.#statements.set(rows, stmt);
    }
    return stmt;
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
        for (let j = 0; j < width; j++) {
          const v = row[j] === undefined ? null : row[j];
          params.push(cls?.[j] ?? classOf(v), typeof v === 'bigint' ? v.toString() : v);
        }
      }
      await runStatement(await this.#statement(chunk.length), params);
    }
  }

  async close(): Promise<void> {
    for (const stmt of this.#statements.values()) await finalize(stmt);
    this.#statements.clear();
  }
}

export class SqliteCaptureStore implements CaptureStoreWriter {
  #closed = false;

  private constructor(
    private readonly db: sqlite3.Database,
    /** The store's file. */
    readonly file: string,
    readonly bounds: StoreBounds,
  ) {}

  /** Opens the store of dataDir, creating its file (and catalog) on first use. */
  static async open(dataDir: string, bounds: StoreBounds = DEFAULT_BOUNDS): Promise<SqliteCaptureStore> {
    const { db, file } = await openStoreFile(dataDir);
    try {
      await inTurn(file, () => ensureCatalog(db));
    } catch (err) {
      await closeDatabase(db).catch(() => undefined);
      throw err;
    }
    return new SqliteCaptureStore(db, file, bounds);
  }

  /** Imports copy in the engine (the capture child, sqlite-copy.ts), in this store's turn. */
  get inEngine(): EngineCopyTarget {
    return {
      file: this.file,
      turn: (fn) =>
        inTurn(this.file, async () => {
          if (this.#closed) throw new Error('the capture store is closed');
          return fn();
        }),
      afterCopy: () =>
        void inTurn(this.file, async () => {
          if (!this.#closed) await run(this.db, 'PRAGMA wal_checkpoint(PASSIVE)').catch(() => undefined);
        }),
    };
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
    const inserters = new Map<string, TableInserter>();
    const counts = new Map<string, number>();
    const placements = new Map<string, Placement>();
    let replaced = 0;
    await run(this.db, 'BEGIN IMMEDIATE');
    try {
      replaced = await removeCapture(this.db, captureId);
      for (const table of tables) {
        const p = await prepareTable(this.db, table, this.bounds);
        placements.set(table.name, p);
        inserters.set(table.name, new TableInserter(this.db, p.physical, table, p.columns.map((c) => c.store)));
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
      for (const i of inserters.values()) await i.close();
      for (const table of tables) await recordCaptureTable(this.db, captureId, table.name, placements.get(table.name)!, counts.get(table.name)!);
      await opts.beforeCommit?.();
      await run(this.db, 'COMMIT');
    } catch (err) {
      for (const i of inserters.values()) await i.close().catch(() => undefined);
      await run(this.db, 'ROLLBACK').catch(() => undefined);
      throw err;
    }
    return { rows: counts, replaced };
  }

  /** Closes the connection once the import in progress (if any) has ended. */
  async close(): Promise<void> {
    await inTurn(this.file, async () => {
      if (this.#closed) return;
      this.#closed = true;
      await closeDatabase(this.db);
    });
  }
}

/** Opens the SQLite capture store of dataDir for imports. */
export function openCaptureStore(dataDir: string, bounds?: StoreBounds): Promise<SqliteCaptureStore> {
  return SqliteCaptureStore.open(dataDir, bounds);
}
