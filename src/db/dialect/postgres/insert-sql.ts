import type { OnConflict } from '../contract.ts';

const texts = new Map<string, string>();

/**
 * The text of one multi-row INSERT of `rows` rows of `columns` into `table` (quoted with `quote`),
 * optionally ... ON CONFLICT DO UPDATE of the update columns, with numbered parameters $n (n from 1,
 * row by row, then onConflict's whereValues); made once per distinct shape and kept.
 */
export function insertRowsSql(
  quote: (name: string) => string,
  table: string,
  columns: readonly string[],
  rows: number,
  onConflict?: OnConflict,
): string {
  // onConflict's where values are bound after the rows' values.
  const where = onConflict?.where?.((i) => `$${rows * columns.length + i + 1}`) ?? '';
  const key = `${table}|${columns.join(',')}|${rows}|${onConflict ? `${onConflict.conflict.join(',')}|${onConflict.update.join(',')}|${where}` : ''}`;
  let sql = texts.get(key);
  if (!sql) {
    const width = columns.length;
    const values = Array.from({ length: rows }, (_, i) => `(${columns.map((_c, j) => `$${i * width + j + 1}`).join(',')})`).join(',');
    sql = `INSERT INTO ${quote(table)} (${columns.map(quote).join(',')}) VALUES ${values}`;
    if (onConflict) {
      sql += ` ON CONFLICT (${onConflict.conflict.map(quote).join(',')}) DO UPDATE SET ${onConflict.update.map((c) => `${quote(c)}=excluded.${quote(c)}`).join(',')}`;
      if (where) sql += ` WHERE ${where}`;
    }
    texts.set(key, sql);
  }
  return sql;
}
