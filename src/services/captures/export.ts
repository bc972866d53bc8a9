/**
 * One capture's rows of one table out of the capture store, streamed (`rigd captures export`,
 * GET /api/v1/captures/{id}/tables/{table}): the capture's own columns in their order, capture_id
 * left out, rows in insertion order. Memory holds one page of rows whatever the table's size.
 *
 * CSV: a header line, RFC 4180 quoting, CRLF line ends, NULL as an empty field, blobs as base64,
 * integers as their digits (past 2^53 exact), reals always with a point or an exponent (1.0, 1e+300:
 * a real stays a real; page-cells.ts), a large text always quoted. No formula guard: the values are
 * the capture's, byte for byte.
 * NDJSON: one JSON object per row, keys in the capture's column order, blobs as base64 strings,
 * integers past 2^53 as strings of their digits, reals as in CSV.
 *
 * The rows come from the store table the capture store's catalog names for the capture's table.
 *
 * Memory: one page bounded by rows and bytes (pages.ts), and one piece of a large value; the next
 * page is read only once the consumer took the previous one (export-stream.ts).
 */
import type { Readable } from 'node:stream';
import { NotInStore, openTablePages, type PageOptions } from '../../db/capture-store/pages.ts';
import { captureStoreName } from '../../db/capture-store/name.ts';
import { Conflict, InvalidInput } from '../../errors.ts';
import { EXPORT_FORMATS, ExportStream, type ExportFormat } from './export-stream.ts';
import type { CaptureService } from './service.ts';
import { findTable, requireIngested } from './tables.ts';

export { EXPORT_FORMATS, type ExportFormat } from './export-stream.ts';

export const CONTENT_TYPES: Record<ExportFormat, string> = { csv: 'text/csv; charset=utf-8', ndjson: 'application/x-ndjson' };

/** Rows per page at most (pages are bounded by captures.export_page_bytes too). */
const PAGE_ROWS = 128;

export interface TableExport {
  captureId: number;
  /** The table's name as the capture spells it. */
  table: string;
  format: ExportFormat;
  contentType: string;
  /** capture-<id>-<table>.<format> */
  filename: string;
  /** The rows as text; closes the store when it ends or is destroyed. */
  stream: Readable;
}

export interface ExportOptions {
  /** captures.export_page_bytes. @default 1 MiB */
  pageBytes?: number;
  /** Called once when the export ends, fails or its stream is destroyed (or it is refused before). */
  onClose?: () => void;
}

export function isExportFormat(value: string): value is ExportFormat {
  return (EXPORT_FORMATS as readonly string[]).includes(value);
}

/**
 * Checks everything that can be wrong before the first byte (unknown capture, not ingested, no such
 * table, unknown format, not in the store) and returns the stream of rows (export-stream.ts).
 */
export async function exportTable(
  captures: CaptureService,
  dataDir: string,
  id: number,
  tableName: string,
  format: string,
  databaseUrl = '',
  opts: ExportOptions = {},
): Promise<TableExport> {
  try {
    return await openExport(captures, dataDir, id, tableName, format, databaseUrl, opts);
  } catch (err) {
    opts.onClose?.();
    throw err;
  }
}

async function openExport(captures: CaptureService, dataDir: string, id: number, tableName: string, format: string, databaseUrl: string, opts: ExportOptions): Promise<TableExport> {
  if (!isExportFormat(format)) {
    throw new InvalidInput(`format must be one of ${EXPORT_FORMATS.join(', ')}, got ${JSON.stringify(format)}`, [{ field: 'format', message: 'unknown format' }]);
  }
  const capture = await captures.get(id);
  const table = findTable(capture, requireIngested(capture), tableName);
  const columns = table.columns.map((c) => c.name);
  const pageBytes = opts.pageBytes ?? 1024 ** 2;
  const paging: PageOptions = { pageRows: PAGE_ROWS, pageBytes, largeBytes: Math.floor(pageBytes / 4) };
  let pages;
  try {
    pages = await openTablePages(dataDir, databaseUrl, table.name, columns, id, paging);
  } catch (err) {
    if (!(err instanceof NotInStore)) throw err;
    const what = err.missing ? `lacks its column(s) ${err.missing.join(', ')}` : 'is not there';
    throw new Conflict(`capture ${id}'s table ${table.name} ${what} in the capture store ${captureStoreName(dataDir, databaseUrl)}: it is not imported`, 'capture_not_imported');
  }
  if (!pages) throw new Conflict('the capture store does not exist yet: no capture has been imported', 'capture_not_imported');
  const stream = new ExportStream(pages, columns, format, opts.onClose);
  return { captureId: id, table: table.name, format, contentType: CONTENT_TYPES[format], filename: `capture-${id}-${table.name}.${format}`, stream };
}
