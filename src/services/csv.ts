/** One CSV field (RFC 4180). Text that a spreadsheet would run as a formula is prefixed with ' . */
export function csvField(value: unknown, opts: { text?: boolean } = {}): string {
  if (value === null || value === undefined) return '';
  let s = value instanceof Date ? value.toISOString() : String(value);
  if (opts.text && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Rows to CSV text with a header line, CRLF line ends. */
export function toCsv<T>(columns: { name: string; get: (row: T) => unknown; text?: boolean }[], rows: T[]): string {
  const lines = [columns.map((c) => csvField(c.name)).join(',')];
  for (const row of rows) lines.push(columns.map((c) => csvField(c.get(row), { text: c.text })).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
