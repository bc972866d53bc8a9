import { terminalText } from './terminal-text.ts';

/** A plain text table: a header row then data rows, columns padded, no trailing spaces; control characters in cells escaped. */
export function renderTable(header: string[], rows: string[][]): string {
  const lines = [header, ...rows].map((l) => l.map((c) => terminalText(c ?? '')));
  const widths = header.map((_, i) => Math.max(...lines.map((l) => (l[i] ?? '').length)));
  return lines.map((l) => `${l.map((c, i) => (c ?? '').padEnd(widths[i])).join('  ').trimEnd()}\n`).join('');
}
