/**
 * Reads an opened, checked capture: the step after the inspector has opened the file read-only with
 * defensive settings, verified the schema policy (plain tables and indexes only) and run quick_check.
 *
 * Today it lists the plain tables with their columns and row counts, and refuses values larger than
 * the length limit. This is where the real import of the capture schema goes later: keep it working on
 * an already-checked handle, reading only the plain tables named in sqlite_schema.
 */
import type { Database } from 'sqlite3';
import { btreeStats, type BtreeStat, columnSpan, measureColumns, plainTableNames, rowCount, tableColumns, tableList } from '../db/capture-file/checks.ts';
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
  /** btreeStats of the capture, when the caller has read them already. */
  stats?: Map<string, BtreeStat>;
}

/** Columns measured per scan; keeps each statement short (SQL length, VDBE program size). */
const COLUMNS_PER_SCAN = 100;

/**
 * Plain tables of the capture in schema order (SQLite's internal sqlite_* tables left out), with
 * their columns and exact row counts. Throws CaptureRejected('row_too_large') when a value is
 * larger than `maxValueBytes`.
 *
 * One walk of the file's pages (dbstat, btreeStats) gives each table's rows (its cells) and its
 * largest record: when that record is no longer than `maxValueBytes`, no value of the table can be,
 * and the record is the table's widest row. Only a table with a longer record is scanned value by
 * value: the length is taken from the record header (octet_length does not load the value), so a
 * huge blob costs no memory here, and the later import would stop on it anyway.
 */
export async function readTables(db: Database, opts: ReadOptions): Promise<CaptureTable[]> {
  const tables: CaptureTable[] = [];
  const stats = opts.stats ?? (await btreeStats(db));
  const withoutRowid = new Set((await tableList(db)).filter((t) => t.wr).map((t) => t.name));
  for (const { name, columns } of await describeTables(db)) {
    const time = opts.spans ? timeColumn(columns) : null;
    const stat = stats.get(name);
    if (columns.length > 0 && stat && stat.largest <= opts.maxValueBytes) {
      opts.widest?.set(name, stat.largest);
      if (time !== null) opts.spans!.push({ table: name, column: time, ...(await columnSpan(db, name, time)) });
      tables.push({ name, columns, rows: withoutRowid.has(name) ? stat.cells : stat.leafCells });
      continue;
    }
    let rows = 0;
    let widest = 0;
    if (columns.length === 0) rows = await rowCount(db, name);
    for (let start = 0; start < columns.length; start += COLUMNS_PER_SCAN) {
      const chunk = columns.slice(start, start + COLUMNS_PER_SCAN);
      // The time column's span rides on the first scan (no second pass over the table for it).
      const measured = await measureColumns(db, name, chunk.map((c) => c.name), start === 0 ? time : null);
      rows = measured.rows;
      if (time !== null && start === 0) opts.spans!.push({ table: name, column: time, min: measured.min, max: measured.max });
      chunk.forEach((c, i) => {
        const longest = measured.longest[i];
        widest += longest ?? 0;
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

/**
 * Plain tables of the capture in schema order with their columns, rows not counted (0): what the
 * schema says, read before quick_check and the bounds scan (a copy that commits only after both
 * starts from it). Refuses a generated column (unsupported_schema).
 */
export async function describeTables(db: Database): Promise<CaptureTable[]> {
  const tables: CaptureTable[] = [];
  for (const name of await plainTableNames(db)) {
    const info = await tableColumns(db, name);
    const generated = info.find((c) => c.hidden !== 0);
    if (generated) {
      throw new CaptureRejected(
        'unsupported_schema',
        `Capture schema is not supported: table ${printable(name)} has a generated column ${printable(generated.name)}.`,
      );
    }
    tables.push({ name, columns: info.map((c) => ({ name: c.name, type: c.type ?? '' })), rows: 0 });
  }
  return tables;
}
