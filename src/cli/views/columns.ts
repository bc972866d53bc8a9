import stringWidth from 'string-width';
import { terminalText } from '../terminal-text.ts';

/**
 * The terminal cells `text` takes: a wide character (CJK, most emoji) two, a combining mark or
 * zero-width character none; so columns line up whatever script a rig's text is in.
 */
export const cellsOf = (text: string): number => stringWidth(text);

/** Pads each column of `rows` (header first) to its widest cell; returns one string per row. Control characters in cells are escaped. */
export function alignColumns(cells: string[][]): string[] {
  const rows = cells.map((row) => row.map((cell) => terminalText(cell ?? '')));
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cellsOf(cell))));
  return rows.map((row) => row.map((cell, i) => cell + ' '.repeat(widths[i] - cellsOf(cell))).join('  ').trimEnd());
}

/** How narrow a column may be shortened, unless the caller says otherwise (never below its header). */
export const MIN_CELLS = 10;

/**
 * How a table fits `width` cells: which columns stay (by index) and how wide each is drawn.
 * First every column is as wide as its widest cell. When that is too wide, the widest columns are
 * shortened first (their long cells end in "…"), each down to its floor: `floors[i]` when given
 * (`Infinity`: never shortened, e.g. addresses and times), else MIN_CELLS, never below its header.
 * Only when even the shortened table does not fit is a column dropped: the least important (highest
 * `priorities` number; of equals, the rightmost), and the widths are worked out again. Priority 0
 * columns are essential and always kept (the line is then cut at the edge).
 */
export function fitLayout(rows: string[][], priorities: readonly number[], width: number, floors: readonly (number | undefined)[] = []): { keep: number[]; widths: number[] } {
  const natural = priorities.map((_, i) => Math.max(0, ...rows.map((r) => cellsOf(r[i] ?? ''))));
  const floor = natural.map((n, i) => Math.min(n, Math.max(cellsOf(rows[0]?.[i] ?? ''), floors[i] ?? MIN_CELLS)));
  const keep = priorities.map((_, i) => i);
  for (;;) {
    const widths = [...natural];
    const total = () => keep.reduce((n, i) => n + widths[i], 0) + 2 * Math.max(keep.length - 1, 0);
    const slack = keep.reduce((n, i) => n + widths[i] - floor[i], 0);
    if (total() <= width || total() - slack <= width) {
      // Shorten the widest shortenable column one cell at a time until the table fits.
      while (total() > width) {
        let widest = -1;
        for (const i of keep) if (widths[i] > floor[i] && (widest < 0 || widths[i] > widths[widest])) widest = i;
        widths[widest] -= 1;
      }
      return { keep, widths };
    }
    let drop = -1;
    for (const i of keep) if (priorities[i] > 0 && (drop < 0 || priorities[i] >= priorities[drop])) drop = i;
    if (drop < 0) {
      for (const i of keep) widths[i] = floor[i];
      return { keep, widths };
    }
    keep.splice(keep.indexOf(drop), 1);
  }
}

/** The columns of `rows` that fit in `width` cells, by index (see fitLayout). */
export function fitColumns(rows: string[][], priorities: readonly number[], width: number, floors?: readonly (number | undefined)[]): number[] {
  return fitLayout(rows, priorities, width, floors).keep;
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** `text` in at most `cells` cells: a longer one is cut (never inside a character and its marks) and ends in "…". */
export function shorten(text: string, cells: number): string {
  if (cellsOf(text) <= cells) return text;
  if (cells <= 0) return '';
  let out = '';
  let used = 0;
  for (const { segment } of graphemes.segment(text)) {
    const w = cellsOf(segment);
    if (used + w > cells - 1) break;
    out += segment;
    used += w;
  }
  return `${out}…`;
}

/** `rows` aligned with the columns that fit in `width`, long cells shortened (see fitLayout). */
export function fitAndAlign(rows: string[][], priorities: readonly number[], width: number, floors?: readonly (number | undefined)[]): string[] {
  const clean = rows.map((row) => row.map(terminalText)); // measured as they will be shown
  const { keep, widths } = fitLayout(clean, priorities, width, floors);
  return alignColumns(clean.map((r) => keep.map((i) => shorten(r[i] ?? '', widths[i]))));
}
