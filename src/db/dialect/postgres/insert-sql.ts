const texts = new Map<string, string>();

/**
 * The text of one multi-row INSERT of `rows` rows of `columns` into `table` (quoted with `quote`),
 * with numbered parameters $n (n from 1, row by row); made once per distinct shape and kept.
 */
export function insertRowsSql(quote: (name: string) => string, table: string, columns: readonly string[], rows: number): string {
  const key = `${table}|${columns.join(',')}|${rows}`;
  let sql = texts.get(key);
  if (!sql) {
    const width = columns.length;
    const values = Array.from({ length: rows }, (_, i) => `(${columns.map((_c, j) => `$${i * width + j + 1}`).join(',')})`).join(',');
    sql = `INSERT INTO ${quote(table)} (${columns.map(quote).join(',')}) VALUES ${values}`;
    texts.set(key, sql);
  }
  return sql;
}
