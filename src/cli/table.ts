import { alignColumns, fitAndAlign } from './views/columns.ts';

/** How a plain table fits a terminal: the importance of each column, and how far it may be shortened (see fitLayout). */
export interface TableFit {
  priorities: readonly number[];
  floors?: readonly (number | undefined)[];
  /** Cells available; default: the terminal's width when stdout is one, else no limit (scripts get every column whole). */
  width?: number;
}

/**
 * A plain text table: a header row then data rows, columns padded, no trailing spaces; control
 * characters in cells escaped. With `fit`, on a terminal (or at fit.width) long cells are shortened
 * and the least important columns dropped until every line fits.
 */
export function renderTable(header: string[], rows: string[][], fit?: TableFit): string {
  const width = fit?.width ?? (process.stdout.isTTY ? process.stdout.columns : undefined);
  if (fit && width) return fitAndAlign([header, ...rows], fit.priorities, width, fit.floors).map((l) => `${l}\n`).join('');
  return alignColumns([header, ...rows]).map((l) => `${l}\n`).join('');
}
