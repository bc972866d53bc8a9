/**
 * The import's reading side, in the capture child (after openChecked and readTables): streams every
 * row of every plain table to rigd in batches bounded by rows and by bytes, waiting for rigd's ack
 * after each (one batch in flight, so memory stays bounded on both sides).
 *
 * Rows are read in key order, one keyset page per batch: `WHERE rowid > ? ORDER BY rowid LIMIT n`
 * for ordinary tables; WITHOUT ROWID tables by their primary key, `WHERE (k1, k2) > (?, ?) ORDER BY
 * k1, k2` (row values; no OFFSET, so every page costs the same). The inspection measured each
 * table's widest possible row (the sum of its columns' longest values); where that many rows of that
 * width fit the byte bound, a page is read at once, else its sizes are measured first with
 * octet_length (read from the record header: a large value is not loaded to be measured), so a batch
 * takes as many rows as fit in the byte bound, and at least one.
 */
import type { Database } from 'sqlite3';
import { reservedName } from '../db/capture-store/layout.ts';
import type { CaptureTable, ImportRequest } from './capture-protocol.ts';
import { all, quoteIdent } from './capture-reader.ts';
import { CaptureRejected } from './capture-rejected.ts';
import { printable } from './capture-schema.ts';

/** Sends one batch and resolves once rigd has taken it. */
export type BatchSink = (table: string, rows: unknown[][], bytes: number) => Promise<void>;

/**
 * One batch in flight: the next page is read while rigd writes the last one, and sent once rigd has
 * acked it (so the child holds two batches at most, rigd one).
 */
class Flow {
  #inFlight: Promise<void> = Promise.resolve();
  constructor(private readonly sink: BatchSink) {}

  async send(table: string, rows: unknown[][], bytes: number): Promise<void> {
    await this.#inFlight;
    this.#inFlight = this.sink(table, rows, bytes);
  }

  drained(): Promise<void> {
    return this.#inFlight;
  }
}

/** Most primary-key columns of a WITHOUT ROWID table (two bounds must fit the variable limit). */
export const MAX_KEY_COLUMNS = 7;
/** Counted per value on top of its octet length (the storage class, the framing). */
const VALUE_OVERHEAD = 8;

const unsupported = (text: string) => new CaptureRejected('unsupported_schema', `Capture schema is not supported: ${text}.`);

/**
 * Refuses what the store cannot hold: a column named capture_id, a table named like a store index,
 * a table wider than the bounds allow (too_wide).
 */
export function checkStorable(tables: readonly CaptureTable[], maxColumns: number): void {
  for (const t of tables) {
    if (t.columns.length > maxColumns) {
      throw new CaptureRejected('too_wide', `Capture table ${printable(t.name)} has ${t.columns.length} columns, more than the ${maxColumns} a capture table may have (captures.max_columns).`);
    }
    if (reservedName('table', t.name)) throw unsupported(`table ${printable(t.name)} has a name the capture store reserves`);
    const c = t.columns.find((x) => reservedName('column', x.name));
    if (c) throw unsupported(`table ${printable(t.name)} has a column named ${printable(c.name)}, which the capture store reserves`);
  }
}

/** The key columns to page by: a rowid alias not taken by a column, or the primary key of a WITHOUT ROWID table. */
export async function keyOf(db: Database, table: CaptureTable): Promise<{ key: string[]; rowid: boolean }> {
  const listed = (await all<{ name: string; wr: number }>(db, 'PRAGMA main.table_list')).find((t) => t.name === table.name);
  if (listed?.wr) {
    const info = await all<{ name: string; pk: number }>(db, `PRAGMA main.table_info(${quoteIdent(table.name)})`);
    const pk = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
    if (pk.length === 0 || pk.length > MAX_KEY_COLUMNS) {
      throw unsupported(`WITHOUT ROWID table ${printable(table.name)} has a primary key of ${pk.length} columns (at most ${MAX_KEY_COLUMNS})`);
    }
    return { key: pk.map(quoteIdent), rowid: false };
  }
  const taken = new Set(table.columns.map((c) => c.name.toLowerCase()));
  const alias = ['rowid', '_rowid_', 'oid'].find((a) => !taken.has(a));
  if (!alias) throw unsupported(`table ${printable(table.name)} has columns named rowid, _rowid_ and oid`);
  return { key: [alias], rowid: true };
}

/** Bytes of a row's values as sent (strings counted per UTF-16 unit, close enough for a bound). */
function rowBytes(row: unknown[]): number {
  let n = 0;
  for (const v of row) {
    n += VALUE_OVERHEAD;
    if (typeof v === 'string') n += v.length;
    else if (v instanceof Uint8Array) n += v.byteLength;
  }
  return n;
}

/**
 * A column as selected for the store: an integer past 2^53 travels as its digits (a JavaScript
 * number would round it); the row's class string says it is an integer.
 */
function exactValue(c: { name: string; type: string }): string {
  const q = quoteIdent(c.name);
  return `CASE WHEN typeof(${q}) = 'integer' AND (${q} > ${Number.MAX_SAFE_INTEGER} OR ${q} < -${Number.MAX_SAFE_INTEGER}) THEN CAST(${q} AS TEXT) ELSE ${q} END`;
}

/**
 * The storage classes of a row's values as one string, a letter per column (typeof's first), built
 * as a balanced tree of || so that its depth stays within the capture's expression-depth limit.
 */
function classesOf(columns: readonly { name: string }[]): string {
  const leaves = columns.map((c) => `substr(typeof(${quoteIdent(c.name)}), 1, 1)`);
  const tree = (from: number, to: number): string => {
    if (to - from === 1) return leaves[from]!;
    const mid = (from + to) >> 1;
    return `(${tree(from, mid)} || ${tree(mid, to)})`;
  };
  return leaves.length === 0 ? "''" : tree(0, leaves.length);
}

/** Streams the rows of `table` through `sink`; returns how many rows it sent. */
async function streamTable(db: Database, table: CaptureTable, widest: number, opts: ImportRequest, flow: Flow): Promise<number> {
  const { key, rowid } = await keyOf(db, table);
  const from = `FROM main.${quoteIdent(table.name)}`;
  // A rowid travels as text and back (exact beyond 2^53, where a JavaScript number is not).
  const keys = rowid ? `CAST(${key[0]} AS TEXT) AS k0` : key.map((k, i) => `${k} AS k${i}`).join(', ');
  const order = `ORDER BY ${key.join(', ')}`;
  const after = rowid ? `${key[0]} > CAST(? AS INTEGER)` : `(${key.join(', ')}) > (${key.map(() => '?').join(', ')})`;
  const sizes = table.columns.map((c, i) => `octet_length(${quoteIdent(c.name)}) AS s${i}`).join(', ');
  const values = [...table.columns.map((c, i) => `${exactValue(c)} AS c${i}`), `${classesOf(table.columns)} AS cls`].join(', ');
  let last: unknown[] | null = null;
  let sent = 0;
  // Rows per page when the widest row is known to fit: no measuring needed.
  const rowBound = widest + VALUE_OVERHEAD * table.columns.length;
  const unmeasured = Math.min(opts.batchRows, Math.floor(opts.batchBytes / Math.max(rowBound, 1)));
  for (;;) {
    const where: string = last ? `WHERE ${after}` : '';
    const params: unknown[] = last ?? [];
    if (unmeasured >= 1) {
      const got: Record<string, unknown>[] = await allWith(db, `SELECT ${keys}, ${values} ${from} ${where} ${order} LIMIT ${unmeasured}`, params);
      if (got.length === 0) return sent;
      const rows = got.map((r) => [...table.columns.map((_, i) => r[`c${i}`]), r.cls]);
      last = key.map((_, i) => got[got.length - 1]![`k${i}`]);
      await flow.send(table.name, rows, rows.reduce((n, r) => n + rowBytes(r), 0));
      sent += rows.length;
      if (got.length < unmeasured) return sent;
      continue;
    }
    const measured = await allWith<Record<string, number | null>>(db, `SELECT ${sizes} ${from} ${where} ${order} LIMIT ${opts.batchRows}`, params);
    if (measured.length === 0) return sent;
    let n = 0;
    let bytes = 0;
    for (const row of measured) {
      let size = 0;
      for (let i = 0; i < table.columns.length; i++) size += (row[`s${i}`] ?? 0) + VALUE_OVERHEAD;
      if (n > 0 && bytes + size > opts.batchBytes) break;
      bytes += size;
      n++;
    }
    const got: Record<string, unknown>[] = await allWith<Record<string, unknown>>(db, `SELECT ${keys}, ${values} ${from} ${where} ${order} LIMIT ${n}`, params);
    const rows = got.map((r) => [...table.columns.map((_, i) => r[`c${i}`]), r.cls]);
    const tail: Record<string, unknown> = got[got.length - 1]!;
    last = key.map((_, i) => tail[`k${i}`]);
    await flow.send(table.name, rows, bytes);
    sent += rows.length;
    if (measured.length < opts.batchRows && n === measured.length) return sent;
  }
}

function allWith<T>(db: Database, sql: string, params: unknown[]): Promise<T[]> {
  return new Promise((resolve, reject) => db.all(sql, params, (err: Error | null, rows: T[]) => (err ? reject(err) : resolve(rows))));
}

/** Streams every table (each row's values, then its class string). (Time spans: readTables measures them in its scan.) */
export async function streamTables(
  db: Database,
  tables: readonly CaptureTable[],
  widest: ReadonlyMap<string, number>,
  opts: ImportRequest,
  sink: BatchSink,
): Promise<void> {
  const flow = new Flow(sink);
  for (const table of tables) {
    // Unknown width: Infinity makes every page measured.
    const sent = await streamTable(db, table, widest.get(table.name) ?? Infinity, opts, flow);
    if (sent !== table.rows) throw new Error(`read ${sent} rows of ${printable(table.name)}, counted ${table.rows}`);
  }
  await flow.drained();
}

