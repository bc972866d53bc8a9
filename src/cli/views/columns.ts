import { terminalText } from '../terminal-text.ts';

/** Pads each column of `rows` (header first) to its widest cell; returns one string per row. Control characters in cells are escaped. */
export function alignColumns(cells: string[][]): string[] {
  const rows = cells.map((row) => row.map(terminalText));
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, [...cell].length)));
  return rows.map((row) => row.map((cell, i) => cell + ' '.repeat(widths[i] - [...cell].length)).join('  ').trimEnd());
}
