/**
 * One capture's rows of one table out of the capture store, streamed (`rigd captures export`,
 * GET /api/v1/captures/{id}/tables/{table}): the capture's own columns in their order, capture_id
 * left out, rows in insertion order. Memory holds one page of rows whatever the table's size.
 *
 * CSV: a header line, RFC 4180 quoting, CRLF line ends, NULL as an empty field, blobs as base64,
 * numbers as SQLite gives them (integers past 2^53 exact, as their digits). No formula guard: the
 * values are the capture's, byte for byte.
 * NDJSON: one JSON object per row, keys in the capture's column order, blobs as base64 strings,
 * integers past 2^53 as strings of their digits.
 */
import { Readable } from 'node:stream';
import type { StoreValue } from '../../db/capture-store/read.ts';
import { openStoreReader, type StoreReader } from '../../db/capture-store/store-reader.ts';
import { Conflict, InvalidInput } from '../../errors.ts';
import { csvField } from '../csv.ts';
import type { CaptureService } from './service.ts';
import { findTable, requireIngested } from './tables.ts';

export const EXPORT_FORMATS = ['csv', 'ndjson'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const CONTENT_TYPES: Record<ExportFormat, string> = { csv: 'text/csv; charset=utf-8', ndjson: 'application/x-ndjson' };

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

export function isExportFormat(value: string): value is ExportFormat {
  return (EXPORT_FORMATS as readonly string[]).includes(value);
}

function csvValue(v: StoreValue): string {
  return Buffer.isBuffer(v) ? v.toString('base64') : csvField(v);
}

function jsonValue(v: StoreValue): string {
  if (Buffer.isBuffer(v)) return JSON.stringify(v.toString('base64'));
  return JSON.stringify(v) ?? 'null';
}

/** Lines of one format; rows are gathered into chunks of about 64 KiB. */
async function* encode(format: ExportFormat, columns: string[], rows: AsyncIterable<StoreValue[]>): AsyncGenerator<string> {
  const keys = columns.map((c) => JSON.stringify(c));
  const line =
    format === 'csv'
      ? (r: StoreValue[]) => `${r.map(csvValue).join(',')}\r\n`
      : (r: StoreValue[]) => `{${r.map((v, i) => `${keys[i]}:${jsonValue(v)}`).join(',')}}\n`;
  let chunk = format === 'csv' ? `${columns.map((c) => csvField(c)).join(',')}\r\n` : '';
  for await (const r of rows) {
    chunk += line(r);
    if (chunk.length >= 65_536) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

/** Opens the store read-only, or says that nothing was imported yet (409 capture_not_imported). */
async function openStore(dataDir: string, databaseUrl: string): Promise<StoreReader> {
  const store = await openStoreReader(dataDir, databaseUrl);
  if (!store) throw new Conflict('the capture store does not exist yet: no capture has been imported', 'capture_not_imported');
  return store;
}

/**
 * Checks everything that can be wrong before the first byte (unknown capture, not ingested, no such
 * table, unknown format, not in the store) and returns the stream of rows.
 */
export async function exportTable(captures: CaptureService, dataDir: string, id: number, tableName: string, format: string, databaseUrl = ''): Promise<TableExport> {
  if (!isExportFormat(format)) {
    throw new InvalidInput(`format must be one of ${EXPORT_FORMATS.join(', ')}, got ${JSON.stringify(format)}`, [{ field: 'format', message: 'unknown format' }]);
  }
  const capture = await captures.get(id);
  const table = findTable(capture, requireIngested(capture), tableName);
  const columns = table.columns.map((c) => c.name);
  const store = await openStore(dataDir, databaseUrl);
  try {
    const have = await store.columns(table.name, id);
    const lower = new Set((have ?? []).map((c) => c.toLowerCase()));
    const missing = columns.filter((c) => !lower.has(c.toLowerCase()));
    if (!have || missing.length > 0) {
      const what = have ? `lacks its column(s) ${missing.join(', ')}` : 'is not there';
      throw new Conflict(`capture ${id}'s table ${table.name} ${what} in the capture store ${store.file}: it is not imported`, 'capture_not_imported');
    }
  } catch (err) {
    await store.close();
    throw err;
  }
  async function* body(): AsyncGenerator<string> {
    try {
      yield* encode(format as ExportFormat, columns, store.rows(table.name, columns, id));
    } finally {
      await store.close();
    }
  }
  const stream = Readable.from(body(), { objectMode: false, encoding: 'utf8' });
  // Destroyed before it was read (client gone): the generator never ran, so its finally will not either.
  stream.once('close', () => void store.close());
  return { captureId: id, table: table.name, format, contentType: CONTENT_TYPES[format], filename: `capture-${id}-${table.name}.${format}`, stream };
}
