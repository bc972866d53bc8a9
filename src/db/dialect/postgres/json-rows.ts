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

/**
 * INSERT INTO table (columns) SELECT columns FROM json_populate_recordset(NULL::table, $1)
 * [ON CONFLICT ... DO UPDATE ...], quoted with `quote`; onConflict's where values are $2, $3...;
 * made once per shape and kept.
 */
export function rowsJsonSql(quote: (name: string) => string, table: string, columns: readonly string[], onConflict?: OnConflict): string {
  const where = onConflict?.where?.((i) => `$${i + 2}`) ?? '';
  const key = `${table}|${columns.join(',')}|${onConflict ? `${onConflict.conflict.join(',')}|${onConflict.update.join(',')}|${where}` : ''}`;
  let sql = texts.get(key);
  if (!sql) {
    const list = columns.map(quote).join(',');
    sql = `INSERT INTO ${quote(table)} (${list}) SELECT ${list} FROM json_populate_recordset(NULL::${quote(table)}, $1::json)`;
    if (onConflict) {
      sql += ` ON CONFLICT (${onConflict.conflict.map(quote).join(',')}) DO UPDATE SET ${onConflict.update.map((c) => `${quote(c)}=excluded.${quote(c)}`).join(',')}`;
      if (where) sql += ` WHERE ${where}`;
    }
    texts.set(key, sql);
  }
  return sql;
}
