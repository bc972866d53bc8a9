/**
 * pages.ts on PostgreSQL. Exports share a few store connections (at most PG_SHARED per database; pg
 * runs one query at a time on each, in order): an export's row list is a WITH HOLD cursor on its
 * connection (a few numbers per row, kept by the server), its values are read by ctid, a large value
 * on its own by ctid, a part of LARGE_PART bytes at a time (large()), on a connection large values
 * share (PG_LARGE). A connection is closed as soon as no export uses it. Store columns are jsonb
 * (pg-values.ts), read as their text so that each value keeps its class; the typed columns of a legacy
 * table (bytea, text, bigint, double precision) are read as they are.
 */
import { StringDecoder } from 'node:string_decoder';
import type pg from 'pg';
import { CAPTURE_ID_COLUMN, quoteIdent } from './layout.ts';
import { SharedHandles } from './shared-handles.ts';
import { jsonbCell, realCell, type ExactValue } from './page-cells.ts';
import { groups, NotInStore, parseLarge, takePage, type LargeValue, type PageCell, type PageOptions, type RowRef, type TablePages } from './pages.ts';
import { mapColumns, type MappedColumn } from './placement.ts';
import { findPgCaptureTable } from './postgres-catalog.ts';
import { storeValue } from './postgres-read.ts';
import { CAPTURE_STORE_SCHEMA, findPgTable, pgColumns, qualified } from './postgres-schema.ts';
import { connectStore } from './postgres-writer.ts';

/** pg_stat_activity's application_name of the connections exports share (the writer's is "rigd capture store"). */
export const EXPORT_APPLICATION = 'rigd capture export';

/** Store connections exports share per database (each runs its queries one at a time, in order). */
const PG_SHARED = 2;

/** Bytes of a large value read per query (pg holds one whole message in one buffer: a part, never the value). */
const LARGE_PART = 1024 * 1024;
/** Parts per round trip (the connections exports share are busy: fewer, larger round trips). */
const LARGE_PARTS = 2;

const shared = new Map<string, SharedHandles<pg.Client>>();
let cursors = 0;

/** Store connections per database that large values' parts are read on, apart from the page reads. */
const PG_LARGE = 1;
const sharedLarge = new Map<string, SharedHandles<pg.Client>>();

type Share = () => Promise<{ handle: pg.Client; release: () => Promise<void> }>;

function share(url: string, from = shared, max = PG_SHARED): ReturnType<Share> {
  let handles = from.get(url);
  if (!handles) {
    handles = new SharedHandles(() => connectStore(url, EXPORT_APPLICATION), (c) => c.end(), max);
    from.set(url, handles);
  }
  return handles.acquire();
}

/** How to read one store column: its large condition, the text a large value is read from, and its bytes. */
interface ColumnRead {
  value: string;
  large: string;
  list: string;
  bytes: string;
  source: Partial<Record<LargeValue['large'], string>>;
  /** A small value as read (c0, c1...) to a page cell of its class. */
  cell: (v: unknown) => ExactValue;
}

/** A column of a store of the earlier layout: typed, values as pg reads them (a double is a real). */
function typedCell(type: string): (v: unknown) => ExactValue {
  return type === 'double precision' || type === 'real' ? (v) => (typeof v === 'number' ? realCell(v) : storeValue(v)) : storeValue;
}

function columnRead(name: string, type: string, index: number, limit: number): ColumnRead {
  const q = quoteIdent(name);
  const entry = (cond: string, kind: string, len: string) => `WHEN ${cond} THEN '${index}:${kind}:' || ${len} || ','`;
  if (type === 'text') {
    const large = `length(${q}) > ${limit}`;
    return { value: q, large, list: `CASE ${entry(large, 'text', `length(${q})`)} ELSE '' END`, bytes: `coalesce(octet_length(${q}), 0)`, source: { text: q }, cell: storeValue };
  }
  if (type === 'jsonb') {
    const blob = `(jsonb_typeof(${q}) = 'object' AND length(${q}->>'base64') > ${limit})`;
    const text = `(jsonb_typeof(${q}) = 'string' AND length(${q} #>> '{}') > ${limit})`;
    // A text holding NUL is kept as {"text": base64 of its UTF-8} (pg-values.ts).
    const nulText = `(jsonb_typeof(${q}) = 'object' AND length(${q}->>'text') > ${limit})`;
    // Read as its text, whose form carries the value's class (pg-values.ts): never parsed as JSON by the driver.
    return {
      value: `${q}::text`,
      cell: (v) => jsonbCell(v as string | null),
      large: `(${blob} OR ${text} OR ${nulText})`,
      list: `CASE ${entry(blob, 'base64', `length(${q}->>'base64')`)} ${entry(text, 'text', `length(${q} #>> '{}')`)} ${entry(nulText, 'base64text', `length(${q}->>'text')`)} ELSE '' END`,
      bytes: `coalesce(octet_length(${q}::text), 0)`,
      source: { base64: `${q}->>'base64'`, text: `${q} #>> '{}'`, base64text: `${q}->>'text'` },
    };
  }
  if (type === 'bytea') {
    const large = `octet_length(${q}) > ${limit}`;
    return { value: q, large, list: `CASE ${entry(large, 'blob', `octet_length(${q})`)} ELSE '' END`, bytes: `coalesce(octet_length(${q}), 0)`, source: { blob: q }, cell: storeValue };
  }
  return { value: q, large: 'false', list: "''", bytes: '8', source: {}, cell: typedCell(type) };
}

class PgPages implements TablePages {
  readonly #ahead: RowRef[] = [];
  #done = false;
  #closed = false;
  /** Two round trips' parts (large()): 4 MiB of a blob's base64; a text's parts may take up to twice that. */
  readonly largeHeld = 2 * LARGE_PARTS * LARGE_PART;

  constructor(
    private readonly release: () => Promise<void>,
    private readonly client: pg.Client,
    /** A share of a connection for large values' parts (their round trips do not wait behind page reads). */
    private readonly shareLarge: Share,
    private readonly cursor: string,
    private readonly table: string,
    private readonly reads: ColumnRead[],
    private readonly captureId: number,
    private readonly opts: PageOptions,
  ) {}

  async next(): Promise<PageCell[][] | null> {
    // The connection is shared: once closed, this export reads nothing more.
    if (this.#closed) throw new Error('the export was closed');
    if (this.#ahead.length === 0 && !this.#done) {
      const limit = this.opts.pageRows;
      const { rows } = await this.client.query<{ r: string; b: string | number; l: string | null }>(`FETCH ${limit} FROM ${this.cursor}`);
      if (rows.length < limit) this.#done = true;
      for (const r of rows) this.#ahead.push({ key: r.r, bytes: Number(r.b), large: parseLarge(r.r, r.l, { blob: 'blob', base64: 'base64', text: 'text', base64text: 'base64text' }) });
    }
    if (this.#ahead.length === 0) return null;
    const page = takePage(this.#ahead, this.opts);
    const select = ['ctid::text AS r', ...this.reads.map((c, i) => `CASE WHEN ${c.large} THEN NULL ELSE ${c.value} END AS c${i}`)].join(', ');
    const { rows } = await this.client.query<Record<string, unknown>>(`SELECT ${select} FROM ${this.table} WHERE ctid = ANY($1::tid[]) AND ${quoteIdent(CAPTURE_ID_COLUMN)} = $2`, [
      page.map((p) => p.key),
      this.captureId,
    ]);
    const byKey = new Map(rows.map((r) => [String(r.r), r]));
    return page.map((p) => {
      const r = byKey.get(p.key);
      if (!r) throw new Error(`capture ${this.captureId}'s rows of ${this.table} changed while they were exported (imported again?)`);
      return this.reads.map((read, c) => p.large?.get(c) ?? read.cell(r[`c${c}`]));
    });
  }

  /**
   * A large value in parts of LARGE_PART bytes: a WITH HOLD cursor holds one copy of the value's bytes
   * (read and detoasted once, kept by the server) and gives LARGE_PARTS parts per FETCH, the next FETCH
   * under way while the last one's parts go out, on a connection of their own (PG_LARGE, shared by
   * large values only: their round trips do not wait behind hundreds of page reads). rigd holds two
   * round trips' parts of a value, never the value (and pg's reader never grows its buffer past one
   * part). Texts come as bytes and are decoded here (a part may end inside a character); base64 texts
   * are ASCII.
   */
  async *large(value: LargeValue): AsyncGenerator<Buffer | string> {
    if (this.#closed) throw new Error('the export was closed');
    const source = this.reads[value.column]?.source[value.large];
    if (!source) throw new Error(`no large value in column ${value.column}`);
    const ascii = value.large === 'base64' || value.large === 'base64text';
    const bytes = value.large === 'blob' ? source : `convert_to(${source}, 'UTF8')`;
    const part = `substring(v.b FROM g * ${LARGE_PART} + 1 FOR ${LARGE_PART})`;
    const cursor = `rigd_large_${process.pid}_${++cursors}`;
    const { handle: client, release } = await this.shareLarge();
    let next: Promise<{ g: number; p: Buffer | string }[]> | null = null;
    try {
      await client.query(
        `DECLARE ${cursor} NO SCROLL CURSOR WITH HOLD FOR WITH v AS MATERIALIZED (SELECT ${bytes} AS b FROM ${this.table} WHERE ctid = $1::tid AND ${quoteIdent(CAPTURE_ID_COLUMN)} = $2) ` +
          `SELECT g, ${ascii ? `convert_from(${part}, 'UTF8')` : part} AS p FROM v, generate_series(0, (octet_length(v.b) - 1) / ${LARGE_PART}) AS g`,
        [value.row, this.captureId],
      );
      const text = value.large === 'text' ? new StringDecoder('utf8') : null;
      const fetch = () => {
        const rows = client.query<{ g: number; p: Buffer | string }>(`FETCH ${LARGE_PARTS} FROM ${cursor}`).then((r) => r.rows);
        // Handled where it is awaited (or in finally): never an unhandled rejection meanwhile.
        rows.catch(() => undefined);
        return rows;
      };
      next = fetch();
      for (let at = 0; next; ) {
        const rows: { g: number; p: Buffer | string }[] = await next;
        if (this.#closed) throw new Error('the export was closed');
        // The next round trip is under way while these parts go out.
        next = rows.length === LARGE_PARTS ? fetch() : null;
        if (at === 0 && rows.length === 0) throw new Error(`capture ${this.captureId}'s rows of ${this.table} changed while they were exported (imported again?)`);
        for (const row of rows) {
          if (Number(row.g) !== at) throw new Error(`part ${row.g} of a large value came instead of part ${at}`);
          at += 1;
          yield text ? text.write(row.p as Buffer) : row.p;
        }
      }
      if (text) yield text.end();
    } finally {
      // A round trip under way ends first (a connection runs its queries in order), then the cursor goes.
      if (next) await next.catch(() => undefined);
      await client.query(`CLOSE ${cursor}`).catch(() => undefined);
      await release();
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.client.query(`CLOSE ${this.cursor}`).catch(() => undefined);
    await this.release();
  }
}

/**
 * Where a capture's table is: the catalog's answer; in a store of the earlier layout (no catalog yet,
 * until rigd serve opens it), the table of that name, its columns as they are.
 */
async function locate(client: pg.Client, schema: string, table: string, captureId: number): Promise<{ physical: string; columns: MappedColumn[] } | null> {
  const { rows } = await client.query("SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = 'rigd_capture_tables'", [schema]);
  if (rows.length > 0) return findPgCaptureTable(client, schema, captureId, table);
  const name = await findPgTable(client, schema, table);
  if (!name) return null;
  const columns = (await pgColumns(client, schema, name)).filter((c) => c.name !== CAPTURE_ID_COLUMN);
  return { physical: name, columns: columns.map((c) => ({ name: c.name, type: '', store: c.name })) };
}

/** pages.ts's openTablePages on PostgreSQL; null when the store schema does not exist. */
export async function openPgPages(url: string, table: string, columns: string[], captureId: number, opts: PageOptions, schema = CAPTURE_STORE_SCHEMA): Promise<TablePages | null> {
  const { handle: client, release } = await share(url);
  try {
    const { rows: schemas } = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (schemas.length === 0) {
      await release();
      return null;
    }
    const found = await locate(client, schema, table, captureId);
    if (!found) throw new NotInStore(table, null);
    const have = await pgColumns(client, schema, found.physical);
    if (have.length === 0) throw new NotInStore(table, null);
    const physical = mapColumns(found.columns, columns, 'postgres');
    const types = new Map(have.map((c) => [c.name, c.type]));
    const missing = columns.filter((_, i) => physical[i] === null || !types.has(physical[i]!));
    if (missing.length > 0) throw new NotInStore(table, missing);
    const limit = Math.floor(opts.largeBytes);
    const reads = physical.map((c, i) => columnRead(c!, types.get(c!)!, i, limit));
    const bytes = groups(reads).map((g) => `(${g.map((c) => `CASE WHEN ${c.large} THEN 0 ELSE ${c.bytes} END`).join(' + ')})`);
    const list = groups(reads).map((g) => `(${g.map((c) => c.list).join(' || ')})`);
    const cursor = `rigd_export_${process.pid}_${++cursors}`;
    const source = qualified(schema, found.physical);
    await client.query(
      `DECLARE ${cursor} NO SCROLL CURSOR WITH HOLD FOR SELECT ctid::text AS r, (${bytes.join(' + ') || '0'})::bigint AS b, (${list.join(' || ') || "''"}) AS l FROM ${source} WHERE ${quoteIdent(CAPTURE_ID_COLUMN)} = ${Number(captureId)} ORDER BY ctid`,
    );
    return new PgPages(release, client, () => share(url, sharedLarge, PG_LARGE), cursor, source, reads, captureId, opts);
  } catch (err) {
    await release();
    throw err;
  }
}
