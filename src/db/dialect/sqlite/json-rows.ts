/**
 * Rows of values as one JSON text for SQLite's json_each(): a multi-row INSERT with one bound
 * parameter instead of one per value. The statement text depends only on the table, the columns,
 * the conflict clause and which columns hold fractions, so SQLite compiles a short statement of the
 * same size whatever the number of rows (compiling a multi-row VALUES statement of 50 rows cost more
 * CPU than running it), and the event loop hands sqlite3 one string instead of converting and
 * binding each value.
 *
 * Every value is stored exactly as binding it would store it. Text, NULL and safe integers go as
 * JSON. A fraction does not: SQLite's own decimal-to-double conversion is off by one unit in the last
 * place for some inputs (39.884131 became 39.884131000000004), so any other number goes as [m, e],
 * its own binary form (m an integer below 2^53, x = m * 2^e), and SQLite computes m * pow(2, e):
 * both factors exact, their product is x itself (±Infinity too). NaN is stored as NULL, as binding
 * stores it. Text that is not well-formed UTF-16 has each lone surrogate replaced by U+FFFD, as
 * binding does.
 */
import type { OnConflict, RawValue } from '../contract.ts';

/** How Sequelize's SQLite dialect writes a DATE ("2026-11-23 07:37:30.123 +00:00"), without moment. */
export function dateText(d: Date): string {
  const iso = d.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)} +00:00`;
}

const LONE_SURROGATE = /\p{Cs}/u;
const LONE_SURROGATES = /\p{Cs}/gu;

const bits = new DataView(new ArrayBuffer(8));

/** x (finite or not, not a safe integer) as [m, e] with x = m * 2^e, m an integer below 2^53. */
function binary(x: number): [number, number] {
  if (!Number.isFinite(x)) return [x > 0 ? 1 : -1, 1024];
  bits.setFloat64(0, x);
  const hi = bits.getUint32(0);
  const lo = bits.getUint32(4);
  const exponent = (hi >>> 20) & 0x7ff;
  let m = (hi & 0xfffff) * 2 ** 32 + lo;
  let e = exponent === 0 ? -1074 : exponent - 1075;
  if (exponent !== 0) m += 2 ** 52;
  // Shortest form: the trailing zero bits of m moved into e.
  while (m !== 0 && m % 2 === 0) {
    m /= 2;
    e++;
  }
  return [hi >>> 31 ? -m : m, e];
}

export interface JsonRows {
  /** The JSON array of rows (one array of values per row). */
  json: string;
  /** Which columns hold at least one number as [m, e] ('1' at their index, else '0'). */
  fractions: string;
}

/** The rows as JSON for rowsSql(). */
export function rowsJson(rows: RawValue[][], width: number): JsonRows {
  const fractions = new Array<string>(width).fill('0');
  let lastDate: Date | null = null;
  let lastText = '';
  const out: unknown[][] = new Array(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    const values: unknown[] = new Array(width);
    for (let c = 0; c < width; c++) {
      const v = row[c];
      if (typeof v === 'string') values[c] = LONE_SURROGATE.test(v) ? v.replace(LONE_SURROGATES, '\ufffd') : v;
      else if (typeof v === 'number') {
        if (Number.isSafeInteger(v)) values[c] = v;
        else if (Number.isNaN(v)) values[c] = null;
        else {
          values[c] = binary(v);
          fractions[c] = '1';
        }
      } else if (v instanceof Date) {
        // A report's time appears several times in its rows: converted once.
        if (v !== lastDate) {
          lastDate = v;
          lastText = dateText(v);
        }
        values[c] = lastText;
      } else values[c] = null;
    }
    out[r] = values;
  }
  return { json: JSON.stringify(out), fractions: fractions.join('') };
}

const texts = new Map<string, string>();

/**
 * INSERT INTO table (columns) SELECT ... FROM json_each($1) [ON CONFLICT ... DO UPDATE ...], quoted
 * with `quote`; made once per shape and kept.
 */
export function rowsSql(quote: (name: string) => string, table: string, columns: readonly string[], fractions: string, onConflict?: OnConflict): string {
  // $1 is the rows' JSON; onConflict's where values follow it.
  const where = onConflict?.where?.((i) => `$${i + 2}`) ?? '';
  const key = `${table}|${columns.join(',')}|${fractions}|${onConflict ? `${onConflict.conflict.join(',')}|${onConflict.update.join(',')}|${where}` : ''}`;
  let sql = texts.get(key);
  if (!sql) {
    const select = columns.map((_c, i) =>
      fractions[i] === '1'
        ? `CASE json_type(value, '$[${i}]') WHEN 'array' THEN CAST(value->>'$[${i}][0]' AS REAL) * pow(2, value->>'$[${i}][1]') ELSE value->>${i} END`
        : `value->>${i}`,
    );
    // WHERE true: an upsert on INSERT ... SELECT needs it (SQLite's parsing ambiguity with ON).
    sql = `INSERT INTO ${quote(table)} (${columns.map(quote).join(',')}) SELECT ${select.join(',')} FROM json_each($1) WHERE true`;
    if (onConflict) {
      sql += ` ON CONFLICT (${onConflict.conflict.map(quote).join(',')}) DO UPDATE SET ${onConflict.update.map((c) => `${quote(c)}=excluded.${quote(c)}`).join(',')}`;
      if (where) sql += ` WHERE ${where}`;
    }
    texts.set(key, sql);
  }
  return sql;
}
