/**
 * Time spans of imported tables: the first timestamp-like column of a table, and its smallest and
 * largest value read as a time.
 *
 * A column is timestamp-like by name (ts, time, timestamp, date, datetime, or ending in _at or
 * _time, any case) or by declared type (containing DATE or TIME). Numbers are epoch seconds below
 * 1e11 (before the year 5138), else epoch milliseconds below 1e14, else microseconds; text is an
 * ISO 8601 or SQLite datetime ('YYYY-MM-DD[ T]HH:MM[:SS[.fff]]', UTC unless it names a zone) or a
 * date, or a number written as text. Anything else reads as no time (null).
 */
import type { StoreColumn } from '../db/capture-store/layout.ts';

const TIME_NAME = /^(ts|time|timestamp|date|datetime)$|_(at|time)$/i;
const TIME_TYPE = /DATE|TIME/i;

/** The first timestamp-like column, by name or declared type; null when none. */
export function timeColumn(columns: readonly StoreColumn[]): string | null {
  return columns.find((c) => TIME_NAME.test(c.name) || TIME_TYPE.test(c.type))?.name ?? null;
}

const MAX_MS = 8.64e15; // the range of a JavaScript Date

function fromEpoch(n: number): string | null {
  if (!Number.isFinite(n)) return null;
  const a = Math.abs(n);
  const ms = a < 1e11 ? n * 1000 : a < 1e14 ? n : n / 1000;
  if (Math.abs(ms) > MAX_MS) return null;
  return new Date(Math.round(ms)).toISOString();
}

const DATETIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

function fromText(s: string): string | null {
  const text = s.trim();
  if (/^-?\d+(\.\d+)?$/.test(text)) return fromEpoch(Number(text));
  const m = DATETIME.exec(text);
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', sec = '00', frac = '', zone] = m;
  const z = !zone ? 'Z' : /^z$/i.test(zone) ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const ms = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${sec}${frac.slice(0, 4)}${z}`);
  if (!Number.isFinite(ms)) return null;
  const out = new Date(ms);
  // Date.parse rolls over (2024-02-30 -> March 1): refuse what is not a real date.
  if (!zone && out.getUTCDate() !== Number(d)) return null;
  return out.toISOString();
}

/** A value as an ISO 8601 UTC time, or null when it is not one. */
export function asIsoTime(v: unknown): string | null {
  if (typeof v === 'number') return fromEpoch(v);
  if (typeof v === 'bigint') return fromEpoch(Number(v));
  if (typeof v === 'string') return fromText(v);
  return null;
}

/** first/last of a column from its min() and max(); both null unless both read as times. */
export function timeSpan(min: unknown, max: unknown): { first: string | null; last: string | null } {
  const first = asIsoTime(min);
  const last = asIsoTime(max);
  if (!first || !last) return { first: null, last: null };
  return first <= last ? { first, last } : { first: last, last: first };
}
