/**
 * The statements that read a capture table's rows in key order for the streamed import (the batching
 * is src/ingest/import-stream.ts's): one keyset page per call, `WHERE rowid > ? ORDER BY rowid LIMIT n`
 * for ordinary tables, WITHOUT ROWID tables by their primary key, `WHERE (k1, k2) > (?, ?) ORDER BY
 * k1, k2` (row values; no OFFSET, so every page costs the same). Each row comes with its key (to page
 * on), its values (an integer past 2^53 as its digits) and its storage classes as one string.
 *
 * Rows stay the objects node-sqlite3 builds (no copy into arrays): `fields` names their values in
 * order, the class string last. Each property costs the reader its time per row, so a rowid table's
 * key rides at the end of the class string (after its letter per column) rather than as a column.
 */
import type sqlite3 from 'sqlite3';
import { quoteIdent } from '../capture-store/layout.ts';
import { all } from './handle.ts';

/**
 * A page of rows as node-sqlite3 gives them: each row's values under PageReader#fields in order, its
 * class string last (its first `width` letters: one per column; a rowid table's key after them),
 * and the key of its last row (null: none).
 */
export interface Page {
  records: Record<string, unknown>[];
  last: unknown[] | null;
}

/**
 * A column as selected for the store: an integer past 2^53 travels as its digits (a JavaScript
 * number would round it); the row's class string says it is an integer.
 */
function exactValue(name: string): string {
  const q = quoteIdent(name);
  return `CASE WHEN typeof(${q}) = 'integer' AND (${q} > ${Number.MAX_SAFE_INTEGER} OR ${q} < -${Number.MAX_SAFE_INTEGER}) THEN CAST(${q} AS TEXT) ELSE ${q} END`;
}

/**
 * The storage classes of a row's values as one string, a letter per column (typeof's first), built
 * as a balanced tree of || so that its depth stays within the capture's expression-depth limit.
 */
function classesOf(columns: readonly string[]): string {
  const leaves = columns.map((c) => `substr(typeof(${quoteIdent(c)}), 1, 1)`);
  const tree = (from: number, to: number): string => {
    if (to - from === 1) return leaves[from]!;
    const mid = (from + to) >> 1;
    return `(${tree(from, mid)} || ${tree(mid, to)})`;
  };
  return leaves.length === 0 ? "''" : tree(0, leaves.length);
}

export class PageReader {
  /** The properties of a page's records: c0 .. c(n-1), then cls. */
  readonly fields: readonly string[];
  readonly #rowid: boolean;
  readonly #from: string;
  readonly #keys: string;
  readonly #order: string;
  readonly #after: string;
  readonly #sizes: string;
  readonly #values: string;

  /** `key`: the columns to page by (quoted identifiers): a rowid alias when `rowid`, else the primary key. */
  constructor(
    private readonly db: sqlite3.Database,
    table: string,
    private readonly columns: readonly string[],
    private readonly key: readonly string[],
    rowid: boolean,
  ) {
    this.fields = [...columns.map((_, i) => `c${i}`), 'cls'];
    this.#rowid = rowid;
    this.#from = `FROM main.${quoteIdent(table)}`;
    // A rowid travels as text and back (exact beyond 2^53, where a JavaScript number is not), after
    // the class letters; a primary key's columns as columns of their own.
    const classes = classesOf(columns);
    this.#keys = rowid ? '' : `${key.map((k, i) => `${k} AS k${i}`).join(', ')}, `;
    this.#order = `ORDER BY ${key.join(', ')}`;
    this.#after = rowid ? `${key[0]} > CAST(? AS INTEGER)` : `(${key.join(', ')}) > (${key.map(() => '?').join(', ')})`;
    this.#sizes = columns.map((c, i) => `octet_length(${quoteIdent(c)}) AS s${i}`).join(', ');
    const cls = rowid ? `${classes} || CAST(${key[0]} AS TEXT)` : classes;
    this.#values = [...columns.map((c, i) => `${exactValue(c)} AS c${i}`), `${cls} AS cls`].join(', ');
  }

  #where(after: unknown[] | null): string {
    return after ? `WHERE ${this.#after}` : '';
  }

  /** Up to `n` rows after key `after` (null: from the start). */
  async page(after: unknown[] | null, n: number): Promise<Page> {
    const records = await all<Record<string, unknown>>(this.db, `SELECT ${this.#keys}${this.#values} ${this.#from} ${this.#where(after)} ${this.#order} LIMIT ${Math.floor(n)}`, after ?? []);
    const tail = records[records.length - 1];
    if (!tail) return { records, last: null };
    return { records, last: this.#rowid ? [String(tail.cls).slice(this.columns.length)] : this.key.map((_, i) => tail[`k${i}`]) };
  }

  /** The byte sizes of each value of up to `n` rows after key `after` (NULL: 0). */
  async sizes(after: unknown[] | null, n: number): Promise<number[][]> {
    const got = await all<Record<string, number | null>>(this.db, `SELECT ${this.#sizes} ${this.#from} ${this.#where(after)} ${this.#order} LIMIT ${Math.floor(n)}`, after ?? []);
    return got.map((r) => this.columns.map((_, i) => r[`s${i}`] ?? 0));
  }
}
