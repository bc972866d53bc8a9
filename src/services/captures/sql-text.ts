/**
 * Where the first SQL statement of a text ends: the index after its `;`, or the text's length.
 * Quotes ('...', "...", `...`, [...]) and comments (-- to the line end, /* ... *\/) are skipped, so
 * a `;` inside them does not count.
 */
export function firstStatementEnd(sql: string): number {
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"' || c === '`' || c === '[') {
      const close = c === '[' ? ']' : c;
      let j = i + 1;
      for (;;) {
        j = sql.indexOf(close, j);
        if (j < 0) return sql.length;
        if (close !== ']' && sql[j + 1] === close) j += 2;
        else break;
      }
      i = j + 1;
    } else if (c === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? sql.length : nl + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (c === ';') {
      return i + 1;
    } else i++;
  }
  return sql.length;
}

/** Only blanks, semicolons and comments. */
export function isEmptySql(sql: string): boolean {
  let rest = sql;
  for (;;) {
    const before = rest;
    rest = rest.replace(/^[\s;]+/, '').replace(/^--[^\n]*(\n|$)/, '').replace(/^\/\*[\s\S]*?(\*\/|$)/, '');
    if (rest === before) return rest === '';
  }
}
