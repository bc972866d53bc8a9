/**
 * The import's reading side, in the capture child (after openChecked and readTables): streams every
 * row of every plain table to rigd in batches bounded by rows and by bytes, waiting for rigd's ack
 * after each (one batch in flight, so memory stays bounded on both sides).
 *
 * Rows are read in key order, one keyset page per batch (the statements: db/capture-file/pages.ts,
 * by rowid, or a WITHOUT ROWID table's primary key; no OFFSET). The inspection measured each
 * table's widest possible row (the sum of its columns' longest values); where that many rows of that
 * width fit the byte bound, a page is read at once, else its sizes are measured first with
 * octet_length (read from the record header: a large value is not loaded to be measured), so a batch
 * takes as many rows as fit in the byte bound, and at least one.
 */
import type { Database } from 'sqlite3';
import { quoteIdent, reservedName } from '../db/capture-store/layout.ts';
import type { CaptureTable, ImportRequest } from './capture-protocol.ts';
import { primaryKey, tableList } from '../db/capture-file/checks.ts';
import { type Page, PageReader } from '../db/capture-file/pages.ts';
import { CaptureRejected } from './capture-rejected.ts';
import { printable } from './capture-schema.ts';

/** One batch: a page's records (PageReader#fields name their values, the class string last) and its bytes when measured. */
export interface Batch {
  table: string;
  records: Page['records'];
  fields: readonly string[];
  /** Columns of the table: letters of each class string that are sent. */
  width: number;
  /** The rows' measured bytes (octet lengths and overhead); undefined: not measured. */
  bytes?: number;
}

/** Sends one batch and resolves once rigd has taken it. */
export type BatchSink = (batch: Batch) => Promise<void>;

/**
 * One batch in flight: the next page is read while rigd writes the last one, and sent once rigd has
 * acked it (so the child holds two batches at most, rigd one).
 */
class Flow {
  #inFlight: Promise<void> = Promise.resolve();
  constructor(private readonly sink: BatchSink) {}

  async send(batch: Batch): Promise<void> {
    await this.#inFlight;
    this.#inFlight = this.sink(batch);
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
  const listed = (await tableList(db)).find((t) => t.name === table.name);
  if (listed?.wr) {
    const pk = await primaryKey(db, table.name);
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

/** Streams the rows of `table` through `sink`; returns how many rows it sent. */
async function streamTable(db: Database, table: CaptureTable, widest: number, opts: ImportRequest, flow: Flow): Promise<number> {
  const { key, rowid } = await keyOf(db, table);
  const reader = new PageReader(db, table.name, table.columns.map((c) => c.name), key, rowid);
  let last: unknown[] | null = null;
  let sent = 0;
  // Rows per page when the widest row is known to fit: no measuring needed.
  const rowBound = widest + VALUE_OVERHEAD * table.columns.length;
  const unmeasured = Math.min(opts.batchRows, Math.floor(opts.batchBytes / Math.max(rowBound, 1)));
  for (;;) {
    if (unmeasured >= 1) {
      const page = await reader.page(last, unmeasured);
      if (page.records.length === 0) return sent;
      last = page.last;
      await flow.send({ table: table.name, records: page.records, fields: reader.fields, width: table.columns.length });
      sent += page.records.length;
      if (page.records.length < unmeasured) return sent;
      continue;
    }
    const measured = await reader.sizes(last, opts.batchRows);
    if (measured.length === 0) return sent;
    let n = 0;
    let bytes = 0;
    for (const row of measured) {
      let size = 0;
      for (const s of row) size += s + VALUE_OVERHEAD;
      if (n > 0 && bytes + size > opts.batchBytes) break;
      bytes += size;
      n++;
    }
    const page = await reader.page(last, n);
    last = page.last;
    await flow.send({ table: table.name, records: page.records, fields: reader.fields, width: table.columns.length, bytes });
    sent += page.records.length;
    if (measured.length < opts.batchRows && n === measured.length) return sent;
  }
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

