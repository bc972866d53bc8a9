// Values of a capture and of the capture store, in a form that shows storage class and bytes:
// [class, text] per value (integer: its digits; real: JavaScript's exact shortest form; text: as is;
// blob: hex; null: ''). The store side reads the physical table the catalog names for the capture
// (SQLite: typeof and hex in the engine; PostgreSQL: the jsonb text, whose form carries the class).
import sqlite3 from 'sqlite3';
import { quoteIdent } from '../../src/db/capture-store/layout.ts';
import { onPostgres } from '../helpers/dialect.ts';
import { storeQuery } from '../helpers/capture-store.ts';

export type Canon = [string, string];

function all<T>(db: sqlite3.Database, sql: string): Promise<T[]> {
  return new Promise((resolve, reject) => db.all(sql, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
}

function canonSelect(columns: string[]): string {
  return columns
    .map((c, i) => {
      const q = quoteIdent(c);
      return `typeof(${q}) AS t${i}, CASE typeof(${q}) WHEN 'integer' THEN CAST(${q} AS TEXT) WHEN 'blob' THEN hex(${q}) ELSE ${q} END AS v${i}`;
    })
    .join(', ');
}

function fromSqlite(rows: Record<string, unknown>[], n: number): Canon[][] {
  return rows.map((r) => Array.from({ length: n }, (_, i): Canon => [String(r[`t${i}`]), r[`v${i}`] === null ? '' : String(r[`v${i}`])]));
}

/** A capture file's values of `table`, in rowid order. */
export async function captureCanon(file: string, table: string, columns: string[]): Promise<Canon[][]> {
  const db = await new Promise<sqlite3.Database>((resolve, reject) => {
    const d: sqlite3.Database = new sqlite3.Database(file, sqlite3.OPEN_READONLY, (err) => (err ? reject(err) : resolve(d)));
  });
  try {
    return fromSqlite(await all(db, `SELECT ${canonSelect(columns)} FROM ${quoteIdent(table)} ORDER BY rowid`), columns.length);
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
}

function pgCanon(text: string | null): Canon {
  if (text === null) return ['null', ''];
  if (text.startsWith('"')) return ['text', JSON.parse(text) as string];
  if (text.startsWith('{')) {
    const o = JSON.parse(text) as { base64?: string; text?: string; real?: string };
    if (o.base64 !== undefined) return ['blob', Buffer.from(o.base64, 'base64').toString('hex').toUpperCase()];
    if (o.text !== undefined) return ['text', Buffer.from(o.text, 'base64').toString('utf8')];
    return ['real', String(Number(o.real))];
  }
  return /[.eE]/.test(text) ? ['real', String(Number(text))] : ['integer', text];
}

/** Where the catalog says capture `captureId`'s `table` is: the physical table and each column's. */
export async function located(dataDir: string, captureId: number, table: string): Promise<{ physical: string; columns: { name: string; store: string }[] }> {
  const [row] = await storeQuery<{ physical: string; columns: string }>(dataDir, 'SELECT physical, columns FROM rigd_capture_tables WHERE capture_id = ? AND name = ?', [captureId, table]);
  if (!row) throw new Error(`the catalog has no table ${table} of capture ${captureId}`);
  return { physical: row.physical, columns: JSON.parse(row.columns) as { name: string; store: string }[] };
}

/** The store's values of capture `captureId`'s `table`, in insertion order. */
export async function storeCanon(dataDir: string, captureId: number, table: string, columns: string[]): Promise<Canon[][]> {
  const where = await located(dataDir, captureId, table);
  const store = columns.map((c) => where.columns.find((x) => x.name === c)!.store);
  if (onPostgres) {
    const sel = store.map((c, i) => `${quoteIdent(c)}::text AS v${i}`).join(', ');
    const rows = await storeQuery<Record<string, string | null>>(dataDir, `SELECT ${sel} FROM ${quoteIdent(where.physical)} WHERE capture_id = ? ORDER BY ctid`, [captureId]);
    return rows.map((r) => store.map((_, i) => pgCanon(r[`v${i}`] ?? null)));
  }
  const rows = await storeQuery<Record<string, unknown>>(dataDir, `SELECT ${canonSelect(store)} FROM ${quoteIdent(where.physical)} WHERE capture_id = ? ORDER BY rowid`, [captureId]);
  return fromSqlite(rows, columns.length);
}
