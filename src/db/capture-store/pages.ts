/**
 * One capture's rows of one store table, read a page at a time with bounded memory, for exports
 * (services/captures/export.ts). A page holds at most `pageRows` rows and about `pageBytes` bytes of
 * values; a text or blob value longer than `largeBytes` is not in the page at all but named by a
 * LargeValue, read on its own when its turn comes (large()): the caller bounds how many large values
 * are read at once. SQLite's driver has no incremental blob reads: a child process reads the value
 * and rigd passes its output on. PostgreSQL detoasts a whole value for any part of it: a cursor reads
 * it once and hands it over a part (1 MiB) per round trip, so rigd holds a part, never the value.
 *
 * Pages follow insertion order. First a list of the rows (their rowid or ctid and the lengths of their
 * values, a few numbers each) is read ahead; each page then takes as many of them as fit in its
 * budget and reads their values. Exports share a few store connections (SharedHandles), so hundreds
 * of exports need no more handles. SQLite: read-only connections to the store file, rows by rowid.
 * PostgreSQL (pg-pages.ts): the list is a WITH HOLD cursor and the values are read by ctid.
 * The catalog says which store table and columns hold the capture's table; values keep their
 * storage class (page-cells.ts: a real is never read as an integer).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { fileURLToPath } from 'node:url';
import type { Database } from 'sqlite3';
import { isPostgresUrl } from '../database-url.ts';
import { openSqliteReadOnly, type ReadOnlySqlite } from '../sqlite-read-only.ts';
import { CAPTURE_ID_COLUMN, captureStorePath, quoteIdent } from './layout.ts';
import { ExactReal, sqliteCell, type ExactValue } from './page-cells.ts';
import { mapColumns } from './placement.ts';
import { SharedHandles } from './shared-handles.ts';
import { all, classesExpression, locateCaptureTable, storeColumns, type StoreValue } from './read.ts';

export interface PageOptions {
  /** Most rows per page. */
  pageRows: number;
  /** Most bytes of (small) values per page; a single row may exceed it. */
  pageBytes: number;
  /** A text or blob longer than this (bytes; characters for a text on PostgreSQL) is read on its own (large()). */
  largeBytes: number;
}

/**
 * A value read on its own: a `blob` as bytes (Buffer), a `base64` blob as its base64 text, a `text`
 * as a string, a `base64text` (PostgreSQL: a text holding NUL) as the base64 of its UTF-8. `length` is in bytes (blobs; texts on SQLite) or characters (texts on PostgreSQL).
 */
export interface LargeValue {
  readonly large: 'blob' | 'base64' | 'text' | 'base64text';
  readonly length: number;
  readonly row: string;
  readonly column: number;
}

export type PageCell = ExactValue | LargeValue;

export interface TablePages {
  /** The next page of rows (cells in the order of `columns`), or null after the last. */
  next(): Promise<PageCell[][] | null>;
  /** A large value of the last page, in chunks: bytes (Buffer) of a blob, strings of a text or of a blob's base64. */
  large(value: LargeValue): AsyncIterable<Buffer | string>;
  /** Most bytes one large value holds in rigd's memory while it is read (absent: the whole value). */
  readonly largeHeld?: number;
  /** Idempotent; releases the store handle at once. */
  close(): Promise<void>;
}

/** The store lacks the table, or some of the capture's columns in it: the capture is not imported there. */
export class NotInStore extends Error {
  constructor(
    readonly table: string,
    readonly missing: string[] | null,
  ) {
    super(missing ? `table ${table} lacks its column(s) ${missing.join(', ')}` : `table ${table} is not there`);
  }
}

export function isLarge(cell: PageCell): cell is LargeValue {
  return cell !== null && typeof cell === 'object' && !Buffer.isBuffer(cell) && !(cell instanceof ExactReal);
}

/** One row of the list read ahead: its key, the bytes of its small values, and its large values. */
export interface RowRef {
  key: string;
  bytes: number;
  /** null: none (most rows). */
  large: Map<number, LargeValue> | null;
}

/** The child entry next to this module, with this module's extension (.ts under tsx, .js in dist/). */
function childEntry(): string {
  const self = fileURLToPath(import.meta.url);
  return path.join(path.dirname(self), `large-value-child${path.extname(self)}`);
}

/** The module loader flags of this process (tsx's under tests), for the child. */
function loaderFlags(): string[] {
  const out: string[] = [];
  const argv = process.execArgv;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (/^--(import|require|loader|experimental-loader)$/.test(a) && i + 1 < argv.length) out.push(a, argv[++i]!);
    else if (/^--(import|require|loader|experimental-loader)=/.test(a)) out.push(a);
  }
  return out;
}

/** Page cache of a shared SQLite export connection, KiB (SQLite's default is 2000). */
const CACHE_KIB = 1024;
/** Columns per SQL expression in the row list (SQLite's expression depth is 1000). */
export const GROUP = 100;

export function groups<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += GROUP) out.push(items.slice(i, i + GROUP));
  return out;
}

/** "3:blob:16777216,7:text:300000," -> the large values of a row. */
export function parseLarge(row: string, text: string | null, kinds: Record<string, LargeValue['large']>): Map<number, LargeValue> | null {
  if (!text) return null;
  const out = new Map<number, LargeValue>();
  for (const part of text.split(',')) {
    if (!part) continue;
    const [column, kind, length] = part.split(':');
    out.set(Number(column), { large: kinds[kind!] ?? 'text', length: Number(length), row, column: Number(column) });
  }
  return out;
}

/** Takes from `ahead` the rows of the next page: at least one, then while rows and bytes allow. */
export function takePage(ahead: RowRef[], opts: PageOptions): RowRef[] {
  let bytes = 0;
  let n = 0;
  while (n < ahead.length && n < opts.pageRows && (n === 0 || bytes + ahead[n]!.bytes <= opts.pageBytes)) bytes += ahead[n++]!.bytes;
  return ahead.splice(0, n);
}

/** Integers JavaScript cannot hold exactly come out as their decimal text (as read.ts). */
function exact(q: string): string {
  const safe = Number.MAX_SAFE_INTEGER;
  return `CASE WHEN typeof(${q}) = 'integer' AND (${q} > ${safe} OR ${q} < -${safe}) THEN CAST(${q} AS TEXT) ELSE ${q} END`;
}

class SqlitePages implements TablePages {
  readonly #ahead: RowRef[] = [];
  #after: number | null = null;
  #done = false;
  readonly #big: (q: string) => string;

  #closed = false;

  constructor(
    private readonly file: string,
    private readonly db: Database,
    private readonly closeDb: () => Promise<void>,
    private readonly table: string,
    private readonly rowid: string,
    private readonly columns: string[],
    private readonly captureId: number,
    private readonly opts: PageOptions,
  ) {
    // Bytes, never length(): a text's length() stops at its first NUL, its octet_length() does not.
    this.#big = (q) => `(typeof(${q}) IN ('blob', 'text') AND octet_length(${q}) > ${Math.floor(opts.largeBytes)})`;
  }

  async #readAhead(): Promise<void> {
    const cols = this.columns.map((c, i) => ({ q: quoteIdent(c), i }));
    const bytes = groups(cols).map((g) => `(${g.map(({ q }) => `CASE WHEN ${this.#big(q)} THEN 0 ELSE coalesce(octet_length(${q}), 0) END`).join(' + ')})`);
    const large = groups(cols).map((g) => g.map(({ q, i }) => `coalesce(CASE WHEN ${this.#big(q)} THEN '${i}:' || typeof(${q}) || ':' || octet_length(${q}) || ',' END, '')`).join(' || '));
    const select = [`${this.rowid} AS r`, `(${bytes.join(' + ') || '0'}) AS b`, ...large.map((l, i) => `${l} AS l${i}`)].join(', ');
    const where = `${quoteIdent(CAPTURE_ID_COLUMN)} = ?${this.#after === null ? '' : ` AND ${this.rowid} > ?`}`;
    const params = this.#after === null ? [this.captureId] : [this.captureId, this.#after];
    const limit = this.opts.pageRows;
    const rows = await all<Record<string, number | string | null>>(this.db, `SELECT ${select} FROM ${quoteIdent(this.table)} WHERE ${where} ORDER BY ${this.rowid} LIMIT ${limit}`, params);
    if (rows.length < limit) this.#done = true;
    for (const r of rows) {
      const key = String(r.r);
      const text = large.map((_, i) => r[`l${i}`] ?? '').join('');
      this.#ahead.push({ key, bytes: Number(r.b), large: parseLarge(key, text, { blob: 'blob', text: 'text' }) });
    }
    if (rows.length) this.#after = Number(rows[rows.length - 1]!.r);
  }

  async next(): Promise<PageCell[][] | null> {
    // The connection is shared: once closed, this export reads nothing more.
    if (this.#closed) throw new Error('the export was closed');
    if (this.#ahead.length === 0 && !this.#done) await this.#readAhead();
    if (this.#ahead.length === 0) return null;
    const page = takePage(this.#ahead, this.opts);
    const values = this.columns.map((c, i) => `CASE WHEN ${this.#big(quoteIdent(c))} THEN NULL ELSE ${exact(quoteIdent(c))} END AS c${i}`);
    const select = [`${this.rowid} AS r`, ...values, `${classesExpression(this.columns)} AS cls`].join(', ');
    const rows = await all<Record<string, StoreValue>>(
      this.db,
      `SELECT ${select} FROM ${quoteIdent(this.table)} WHERE ${quoteIdent(CAPTURE_ID_COLUMN)} = ? AND ${this.rowid} >= ? AND ${this.rowid} <= ? ORDER BY ${this.rowid}`,
      [this.captureId, Number(page[0]!.key), Number(page[page.length - 1]!.key)],
    );
    if (rows.length !== page.length || rows.some((r, i) => String(r.r) !== page[i]!.key)) {
      throw new Error(`capture ${this.captureId}'s rows of ${this.table} changed while they were exported (imported again?)`);
    }
    return rows.map((r, i) => this.columns.map((_, c) => page[i]!.large?.get(c) ?? sqliteCell(r[`c${c}`] ?? null, String(r.cls)[c])));
  }

  /** Read by a child process (large-value-child.ts), its output passed on as it comes. */
  async *large(value: LargeValue): AsyncGenerator<Buffer | string> {
    if (this.#closed) throw new Error('the export was closed');
    const child = spawn(process.execPath, [...loaderFlags(), childEntry(), this.file, this.table, this.columns[value.column]!, this.rowid, value.row, String(this.captureId)], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    // A child that cannot start ('error') fails this export only, never the process.
    const exited = new Promise<number | null>((resolve) => {
      child.once('error', () => resolve(null));
      child.once('close', (code) => resolve(code));
    });
    const text = value.large === 'text' ? new StringDecoder('utf8') : null;
    try {
      for await (const chunk of child.stdout as AsyncIterable<Buffer>) yield text ? text.write(chunk) : chunk;
      if (text) yield text.end();
      const code = await exited;
      if (code !== 0) throw new Error(`capture ${this.captureId}'s rows of ${this.table} changed while they were exported (imported again?)`);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }

  close(): Promise<void> {
    this.#closed = true;
    return this.closeDb();
  }
}

const sqliteShared = new Map<string, SharedHandles<ReadOnlySqlite>>();

/**
 * A share of a read-only connection to the store file. Exports share a few: a connection closed while
 * another one of the process holds a lock on the file keeps its descriptor until that lock goes
 * (SQLite's unix VFS), so a connection per export would leave a descriptor per export behind.
 */
async function sqliteShare(file: string): Promise<{ handle: ReadOnlySqlite; release: () => Promise<void> }> {
  let shared = sqliteShared.get(file);
  if (!shared) {
    shared = new SharedHandles(
      async () => {
        const store = await openSqliteReadOnly(file);
        // One statement at a time per connection, queued by the driver: no libuv thread waits on its mutex.
        store.db.serialize();
        await all(store.db, `PRAGMA cache_size = -${CACHE_KIB}`);
        return store;
      },
      (store) => store.close(),
    );
    sqliteShared.set(file, shared);
  }
  return shared.acquire();
}

async function openSqlitePages(dataDir: string, table: string, columns: string[], captureId: number, opts: PageOptions): Promise<TablePages | null> {
  const file = captureStorePath(dataDir);
  if (!existsSync(file)) return null;
  const { handle: store, release } = await sqliteShare(file);
  try {
    // The catalog says which store table and columns hold this capture's table (read.ts).
    const found = await locateCaptureTable(store.db, table, captureId);
    if (!found) throw new NotInStore(table, null);
    const have = await storeColumns(store.db, found.physical);
    if (!have) throw new NotInStore(table, null);
    const physical = mapColumns(found.columns.map((c) => ({ ...c, type: '' })), columns, 'sqlite');
    const taken = new Set(have.map((c) => c.toLowerCase()));
    const missing = columns.filter((_, i) => physical[i] === null || !taken.has(physical[i]!.toLowerCase()));
    if (missing.length > 0) throw new NotInStore(table, missing);
    const rowid = ['rowid', '_rowid_', 'oid'].find((n) => !taken.has(n));
    if (!rowid) throw new Error(`store table ${found.physical} has columns named rowid, _rowid_ and oid: its rows cannot be paged`);
    return new SqlitePages(file, store.db, release, found.physical, rowid, physical as string[], captureId, opts);
  } catch (err) {
    await release();
    throw err;
  }
}

/**
 * The pages of one capture's rows of `table` (its columns in `columns` order); null when there is no
 * store; NotInStore when the table or a column is not in it.
 */
export async function openTablePages(dataDir: string, url: string, table: string, columns: string[], captureId: number, opts: PageOptions): Promise<TablePages | null> {
  if (isPostgresUrl(url)) {
    const { openPgPages } = await import('./pg-pages.ts');
    return openPgPages(url, table, columns, captureId, opts);
  }
  return openSqlitePages(dataDir, table, columns, captureId, opts);
}
