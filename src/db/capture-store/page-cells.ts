/**
 * Values of export pages (pages.ts, pg-pages.ts) with their storage class kept: a JavaScript number
 * cannot tell the real 1.0 from the integer 1, so a real that would print as an integer, and an
 * infinite one, travel as an ExactReal holding the text that reads back as that real.
 *
 *   1.0 -> "1.0"    -0.0 -> "-0.0"    1e21 -> "1e+21"    Infinity -> "1e999"    0.5 -> 0.5 (a number)
 *
 * Every other value is a StoreValue: integers as numbers (past 2^53 as their digits), text as
 * strings, blobs as Buffers, NULL as null.
 */
import { decodeValue } from './pg-values.ts';
import type { StoreValue } from './read.ts';

/** A real written as the text that reads back as that same real (never as an integer). */
export class ExactReal {
  constructor(readonly text: string) {}
}

export type ExactValue = StoreValue | ExactReal;

/** The text of a real that reads back as a real: a point or an exponent always; 1e999 for infinity (JSON has no Infinity). */
export function realText(x: number): string {
  if (!Number.isFinite(x)) return x > 0 ? '1e999' : '-1e999';
  const s = Object.is(x, -0) ? '-0' : String(x);
  return /[.e]/.test(s) ? s : `${s}.0`;
}

/** A real as a page cell: a number when it prints as a real already, else an ExactReal (NaN, which SQLite stores as NULL: null). */
export function realCell(x: number): ExactValue {
  if (Number.isNaN(x)) return null;
  return Number.isFinite(x) && !Number.isInteger(x) ? x : new ExactReal(realText(x));
}

/** A SQLite value of storage class `cls` (typeof's first letter) as a page cell. */
export function sqliteCell(v: StoreValue, cls: string | undefined): ExactValue {
  return cls === 'r' && typeof v === 'number' ? realCell(v) : v;
}

/** A value of a jsonb column of the PostgreSQL store (its text, pg-values.ts) as a page cell. */
export function jsonbCell(text: string | null): ExactValue {
  if (text === null) return null;
  const c = text[0];
  const real = (c === '-' || (c !== undefined && c >= '0' && c <= '9')) && /[.eE]/.test(text);
  if (real) return realCell(Number(text));
  if (c === '{' && text.includes('"real"')) {
    const v = decodeValue(text);
    if (typeof v === 'number') return realCell(v);
  }
  return decodeValue(text);
}
