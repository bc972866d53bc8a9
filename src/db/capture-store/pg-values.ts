/**
 * Values of the PostgreSQL store, exactly: every store column is jsonb, and a value's jsonb text
 * says its SQLite storage class, so export gives back the class and the bytes the capture held.
 *
 *   NULL     SQL NULL
 *   integer  a JSON number without point or exponent: 7, -12, 9007199254740993 (any size, exact)
 *   real     a JSON number with a point: 1.0, 12.5, 100000000000000000000.0 (written in full, so
 *            jsonb's numeric keeps the point; the digits are the double's shortest exact form);
 *            Infinity as {"real": "Infinity"}, -0.0 as {"real": "-0"}
 *   text     a JSON string; text holding NUL (which jsonb cannot) as {"text": "<base64 of UTF-8>"}
 *   blob     {"base64": "..."}
 *
 * Query across captures works on these as numbers and strings (`(col)::numeric`, `col #>> '{}'`).
 */
import type { StoreValue } from './read.ts';

/** A value's class letter as the capture child reads it (SQLite's typeof, first letter). */
export type ValueClass = 'n' | 'i' | 'r' | 't' | 'b';

export function realText(x: number): string {
  // numeric has no negative zero: -0.0 travels like infinity, as its text.
  if (!Number.isFinite(x) || Object.is(x, -0)) return JSON.stringify({ real: Object.is(x, -0) ? '-0' : String(x) });
  // A whole double gets its point; from 1e21 on String() writes an exponent, so its digits in full.
  // Any other double's shortest form has a point or a negative exponent already.
  if (Number.isInteger(x)) return Math.abs(x) < 1e21 ? `${x}.0` : `${BigInt(x).toString()}.0`;
  return String(x);
}

/** The jsonb text of a value of class `cls` (inferred from its JavaScript type when not given). */
export function encodeValue(v: unknown, cls?: string): string | null {
  if (v === null || v === undefined || cls === 'n') return null;
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return JSON.stringify({ base64: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') });
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (cls === 'r' || (cls === undefined && !Number.isInteger(v))) return realText(v);
    return String(v);
  }
  const s = String(v);
  // The child sends an integer past 2^53 as its digits.
  if (cls === 'i' && /^-?\d+$/.test(s)) return s;
  if (cls === 'r') return realText(Number(s));
  if (s.includes('\u0000')) return JSON.stringify({ text: Buffer.from(s, 'utf8').toString('base64') });
  return JSON.stringify(s);
}

/** A jsonb store value (its text) back as the store's readers give values: exact class and bytes. */
export function decodeValue(text: string | null): StoreValue {
  if (text === null) return null;
  const c = text[0];
  if (c === '"') return JSON.parse(text) as string;
  if (c === '{') {
    const o = JSON.parse(text) as Record<string, unknown>;
    if (typeof o.base64 === 'string') return Buffer.from(o.base64, 'base64');
    if (typeof o.text === 'string') return Buffer.from(o.text, 'base64').toString('utf8');
    if (typeof o.real === 'string') return Number(o.real);
    return text;
  }
  if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
    if (/[.eE]/.test(text)) return Number(text);
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : text;
  }
  // true, false, arrays: never written by rigd (a store of the earlier layout may hold them).
  return text;
}
