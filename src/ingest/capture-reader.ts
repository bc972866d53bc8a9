/**
 * Reads an opened, checked capture: the step after the inspector has opened the file read-only with
 * defensive settings, verified the schema policy (plain tables and indexes only) and run quick_check.
 *
 * Today it lists the plain tables with their columns and row counts, and refuses values larger than
 * the length limit. This is where the real import of the capture schema goes later: keep it working on
 * an already-checked handle, reading only the plain tables named in sqlite_schema.
 */
import type { Database } from 'sqlite3';
import type { CaptureTable, RawTimeSpan } from './capture-protocol.ts';
import { CaptureRejected } from './capture-rejected.ts';
import { printable } from './capture-schema.ts';
import { timeColumn } from './import-time.ts';

export interface ReadOptions {
  /** Largest single string or blob value allowed, bytes. */
  maxValueBytes: number;
  /** Filled with the widest row each table can have: the sum of its columns' longest values, bytes. */
  widest?: Map<string, number>;
  /** Filled with the min and max of each table's time column, measured in the same scan. */
  spans?: RawTimeSpan[];
}

/** Columns measured per scan; keeps each statement short (SQL length, VDBE program size). */
const COLUMNS_PER_SCAN = 100;

export function all<T>(db: Database, sql: string): Promise<T[]> {
  return new Promise((resolve, reject) => db.all(sql, (err: Error | null, rows: T[]) => (err ? reject(err) : resolve(rows))));
}

/** An identifier as a double-quoted SQL identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

interface XInfoRow {
  cid: number;
  name: string;
  type: string;
  hidden: number;
}

/**
 * Plain tables of the capture in schema order (SQLite's internal sqlite_* tables left out), with
 * their columns and exact row counts. Throws CaptureRejected('row_too_large') when a value is
 * larger than `maxValueBytes`: the length is taken from the record header (octet_length does not
 * load the value), so a huge blob costs no memory here, and the later import would stop on it anyway.
 */
export async function readTables(db: Database, opts: ReadOptions): Promise<CaptureTable[]> {
  const names = await all<{ name: string }>(
    db,
    "SELECT name FROM main.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid",
  );
  const tables: CaptureTable[] = [];
  for (const { name } of names) {
    const table = quoteIdent(name);
    const info = await all<XInfoRow>(db, `PRAGMA main.table_xinfo(${table})`);
    const generated = info.find((c) => c.hidden !== 0);
    if (generated) {
      throw new CaptureRejected(
        'unsupported_schema',
        `Capture schema is not supported: table ${printable(name)} has a generated column ${printable(generated.name)}.`,
      );
    }
    const columns = info.map((c) => ({ name: c.name, type: c.type ?? '' }));
    let rows = 0;
    let widest = 0;
    if (columns.length === 0) {
      rows = Number((await all<{ n: number }>(db, `SELECT count(*) AS n FROM main.${table}`))[0]!.n);
    }
    const time = opts.spans ? timeColumn(columns) : null;
    for (let start = 0; start < columns.length; start += COLUMNS_PER_SCAN) {
      const chunk = columns.slice(start, start + COLUMNS_PER_SCAN);
      const measures = chunk.map((c, i) => `max(octet_length(${quoteIdent(c.name)})) AS m${i}`);
      // The time column's span rides on the first scan (no second pass over the table for it).
      if (time !== null && start === 0) measures.push(`min(${quoteIdent(time)}) AS lo`, `max(${quoteIdent(time)}) AS hi`);
      const [row] = await all<Record<string, unknown>>(
        db,
        `SELECT count(*) AS n, ${measures.join(', ')} FROM main.${table}`,
      );
      rows = Number(row!.n);
      if (time !== null && start === 0) opts.spans!.push({ table: name, column: time, min: row!.lo ?? null, max: row!.hi ?? null });
      chunk.forEach((c, i) => {
        const longest = row![`m${i}`];
        widest += typeof longest === 'number' ? longest : 0;
        if (typeof longest === 'number' && longest > opts.maxValueBytes) {
          throw new CaptureRejected(
            'row_too_large',
            `Capture has a value of ${longest} bytes in column ${printable(c.name)} of table ${printable(name)}, larger than the limit of ${opts.maxValueBytes} bytes.`,
          );
        }
      });
    }
    opts.widest?.set(name, widest);
    tables.push({ name, columns, rows });
  }
  return tables;
}
