import { terminalText } from '../terminal-text.ts';

/** Pads each column of `rows` (header first) to its widest cell; returns one string per row. Control characters in cells are escaped. */
export function alignColumns(cells: string[][]): string[] {
  const rows = cells.map((row) => row.map(terminalText));
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, [...cell].length)));
  return rows.map((row) => row.map((cell, i) => cell + ' '.repeat(widths[i] - [...cell].length)).join('  ').trimEnd());
}

/**
 * Which columns of `rows` (header first) fit in `width` cells once aligned, by index: the least
 * important column (highest `priorities` number; of equals, the rightmost) goes first, until the
 * rest fit. Priority 0 columns are essential and always kept (the line is then cut at the edge).
 */
export function fitColumns(rows: string[][], priorities: readonly number[], width: number): number[] {
  const widths = priorities.map((_, i) => Math.max(0, ...rows.map((r) => [...(r[i] ?? '')].length)));
  const keep = priorities.map((_, i) => i);
  const total = () => keep.reduce((n, i) => n + widths[i], 0) + 2 * Math.max(keep.length - 1, 0);
  while (total() > width) {
    let drop = -1;
    for (const i of keep) if (priorities[i] > 0 && (drop < 0 || priorities[i] >= priorities[drop])) drop = i;
    if (drop < 0) break;
    keep.splice(keep.indexOf(drop), 1);
  }
  return keep;
}

/** `rows` aligned with only the columns that fit in `width` (see fitColumns). */
export function fitAndAlign(rows: string[][], priorities: readonly number[], width: number): string[] {
  const clean = rows.map((row) => row.map(terminalText)); // measured as they will be shown
  const keep = fitColumns(clean, priorities, width);
  return alignColumns(clean.map((r) => keep.map((i) => r[i] ?? '')));
}
