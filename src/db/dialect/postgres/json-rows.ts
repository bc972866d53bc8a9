/**
 * Rows of values as one JSON parameter for PostgreSQL's json_populate_recordset(): a multi-row INSERT
 * with one bound parameter instead of one per value. The statement's text depends only on the table,
 * the columns and the conflict clause, whatever the number of rows; neither Sequelize nor pg walks
 * the values one by one, and the table's own column types read them (no cast list to keep in step
 * with the schema).
 *
 * Every value is stored as binding it alone would store it. A number goes as JSON, which PostgreSQL
 * reads to the same double (JavaScript writes the shortest text that reads back exactly; float8 input
 * rounds correctly); NaN and ±Infinity, which JSON has not, go as text that the column's input reads
 * ('NaN', 'Infinity'). A Date goes as its ISO text (UTC, to the millisecond): the same instant pg
 * sends. Text that is not well-formed UTF-16 has each lone surrogate replaced by U+FFFD, as pg's
 * UTF-8 encoding of a bound string does.
 */
import type { OnConflict, RawValue } from '../contract.ts';

const LONE_SURROGATE = /\p{Cs}/u;
const LONE_SURROGATES = /\p{Cs}/gu;

/** The rows as a JSON array of objects keyed by column name (NULL values left out: a missing key reads as NULL). */
export function rowsJson(columns: readonly string[], rows: RawValue[][]): string {
  const out: Record<string, string | number>[] = new Array(rows.length);
  let lastDate: Date | null = null;
  let lastText = '';
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    const o: Record<string, string | number> = {};
    for (let c = 0; c < columns.length; c++) {
      const v = row[c];
      if (v === null || v === undefined) continue;
      const name = columns[c]!;
      if (typeof v === 'string') o[name] = LONE_SURROGATE.test(v) ? v.replace(LONE_SURROGATES, '\ufffd') : v;
      else if (typeof v === 'number') o[name] = Number.isFinite(v) ? v : String(v);
      else {
        // A report's time appears several times in its rows: converted once.
        if (v !== lastDate) {
          lastDate = v;
          lastText = v.toISOString();
        }
        o[name] = lastText;
      }
    }
    out[r] = o;
  }
  return JSON.stringify(out);
}

const texts = new Map<string, string>();

interface Shape {
  table: string;
  columns: readonly string[];
  onConflict?: OnConflict | undefined;
}

/** INSERT INTO table (columns) SELECT columns FROM json_populate_recordset(NULL::table, $json) [ON CONFLICT ...]. */
function insertText(quote: (name: string) => string, shape: Shape, json: number, where: string): string {
  const list = shape.columns.map(quote).join(',');
  let sql = `INSERT INTO ${quote(shape.table)} (${list}) SELECT ${list} FROM json_populate_recordset(NULL::${quote(shape.table)}, $${json}::json)`;
  const c = shape.onConflict;
  if (c) {
    sql += ` ON CONFLICT (${c.conflict.map(quote).join(',')}) DO UPDATE SET ${c.update.map((u) => `${quote(u)}=excluded.${quote(u)}`).join(',')}`;
    if (where) sql += ` WHERE ${where}`;
  }
  return sql;
}

function shapeKey(shape: Shape, where: string): string {
  const c = shape.onConflict;
  return `${shape.table}|${shape.columns.join(',')}|${c ? `${c.conflict.join(',')}|${c.update.join(',')}|${where}` : ''}`;
}

/**
 * INSERT INTO table (columns) SELECT columns FROM json_populate_recordset(NULL::table, $1)
 * [ON CONFLICT ... DO UPDATE ...], quoted with `quote`; onConflict's where values are $2, $3...;
 * made once per shape and kept.
 */
export function rowsJsonSql(quote: (name: string) => string, table: string, columns: readonly string[], onConflict?: OnConflict): string {
  const shape = { table, columns, onConflict };
  const where = onConflict?.where?.((i) => `$${i + 2}`) ?? '';
  const key = shapeKey(shape, where);
  let sql = texts.get(key);
  if (!sql) {
    sql = insertText(quote, shape, 1, where);
    texts.set(key, sql);
  }
  return sql;
}

/**
 * WITH "first" AS (first's INSERT) then's INSERT: first's rows are $1, then's $2, first's where
 * values from $3, then's after them; made once per pair of shapes and kept.
 */
export function pairJsonSql(quote: (name: string) => string, first: Shape, then: Shape): string {
  const firstWhere = first.onConflict?.where?.((i) => `$${i + 3}`) ?? '';
  const after = 3 + (first.onConflict?.whereValues?.length ?? 0);
  const thenWhere = then.onConflict?.where?.((i) => `$${i + after}`) ?? '';
  const key = `pair|${shapeKey(first, firstWhere)}|${shapeKey(then, thenWhere)}`;
  let sql = texts.get(key);
  if (!sql) {
    sql = `WITH ${quote('first')} AS (${insertText(quote, first, 1, firstWhere)}) ${insertText(quote, then, 2, thenWhere)}`;
    texts.set(key, sql);
  }
  return sql;
}
