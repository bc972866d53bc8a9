/**
 * Rows of values as one JSON text for SQLite's json_each(): a multi-row INSERT with one bound
 * parameter instead of one per value. The statement text depends only on the table, the columns,
 * the conflict clause and which columns hold fractions, so SQLite compiles a short statement of the
 * same size whatever the number of rows (compiling a multi-row VALUES statement of 50 rows cost more
 * CPU than running it), and the event loop hands sqlite3 one string instead of converting and
 * binding each value.
 *
 * Every value must be stored exactly as binding it would store it. Text, NULL and safe integers go as
 * JSON. A fraction does not: SQLite's own decimal-to-double conversion is off by one unit in the last
 * place for some inputs (39.884131 became 39.884131000000004), so a fraction goes as [m, 10^k] with
 * m / 10^k its shortest decimal (String(x)) and both exact in a double, and SQLite divides them: IEEE
 * division rounds the exact quotient correctly, which is the double x itself. Values that fit none
 * of these (more than 15 significant digits, exponents, non-finite numbers, text that is not
 * well-formed UTF-16) make rowsJson return null, and the caller binds the batch value by value.
 */
import type { OnConflict, RawValue } from '../contract.ts';

/** How Sequelize's SQLite dialect writes a DATE ("2026-11-23 07:37:30.123 +00:00"), without moment. */
export function dateText(d: Date): string {
  const iso = d.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)} +00:00`;
}

/** Largest integer below 2^53: every integer up to it is exact in a double. */
const EXACT = 2 ** 53;
const FRACTION = /^(-?)(\d+)\.(\d+)$/;
/** Binding turns one into U+FFFD; JSON would carry it as an escape SQLite decodes otherwise. */
const LONE_SURROGATE = /\p{Cs}/u;

/** A fraction as [m, 10^k] (exact in doubles and in SQLite's 64-bit integers), or null. */
function fraction(x: number): [number, number] | null {
  const m = FRACTION.exec(String(x));
  if (!m || m[3].length > 18) return null;
  const digits = Number(m[2] + m[3]);
  if (digits >= EXACT) return null;
  return [m[1] ? -digits : digits, 10 ** m[3].length];
}

export interface JsonRows {
  /** The JSON array of rows (one array of values per row). */
  json: string;
  /** Bit i set: column i holds at least one fraction ([m, 10^k]). */
  fractions: number;
}

/** The rows as JSON for rowsSql(), or null when a value cannot travel exactly that way. */
export function rowsJson(rows: RawValue[][], width: number): JsonRows | null {
  if (width > 30) return null;
  let fractions = 0;
  let lastDate: Date | null = null;
  let lastText = '';
  const out: unknown[][] = new Array(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    const values: unknown[] = new Array(width);
    for (let c = 0; c < width; c++) {
      const v = row[c];
      if (typeof v === 'string') {
        if (LONE_SURROGATE.test(v)) return null;
        values[c] = v;
      } else if (typeof v === 'number') {
        if (Number.isSafeInteger(v)) values[c] = v;
        else {
          const f = Number.isFinite(v) ? fraction(v) : null;
          if (!f) return null;
          values[c] = f;
          fractions |= 1 << c;
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
  return { json: JSON.stringify(out), fractions };
}

const texts = new Map<string, string>();

/**
 * INSERT INTO table (columns) SELECT ... FROM json_each(?1) [ON CONFLICT ... DO UPDATE ...], quoted
 * with `quote`; made once per shape and kept.
 */
export function rowsSql(quote: (name: string) => string, table: string, columns: readonly string[], fractions: number, onConflict?: OnConflict): string {
  const key = `${table}|${columns.join(',')}|${fractions}|${onConflict ? `${onConflict.conflict.join(',')}|${onConflict.update.join(',')}|${onConflict.where ?? ''}` : ''}`;
  let sql = texts.get(key);
  if (!sql) {
    const select = columns.map((_c, i) =>
      fractions & (1 << i)
        ? `CASE json_type(value, '$[${i}]') WHEN 'array' THEN CAST(value->>'$[${i}][0]' AS REAL) / (value->>'$[${i}][1]') ELSE value->>${i} END`
        : `value->>${i}`,
    );
    // WHERE true: an upsert on INSERT ... SELECT needs it (SQLite's parsing ambiguity with ON).
    sql = `INSERT INTO ${quote(table)} (${columns.map(quote).join(',')}) SELECT ${select.join(',')} FROM json_each(?1) WHERE true`;
    if (onConflict) {
      sql += ` ON CONFLICT (${onConflict.conflict.map(quote).join(',')}) DO UPDATE SET ${onConflict.update.map((c) => `${quote(c)}=excluded.${quote(c)}`).join(',')}`;
      if (onConflict.where) sql += ` WHERE ${onConflict.where}`;
    }
    texts.set(key, sql);
  }
  return sql;
}
