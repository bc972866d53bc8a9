/**
 * A capture's tables as recorded on it once imported (captures.tables, layout.ts's
 * CaptureTableSummary), and the checks every reader of one table makes: the capture is ingested and
 * has that table.
 */
import type { CaptureTableSummary } from '../../db/capture-store/layout.ts';
import { Conflict, DomainError } from '../../errors.ts';
import type { CaptureView } from './service.ts';

/**
 * The capture's table summaries. A capture recorded before the store existed has name, columns and
 * rows only: its time span reads as unknown (null).
 */
export function tableSummaries(c: CaptureView): CaptureTableSummary[] {
  return (c.tables ?? []).map((t) => {
    const s = t as Partial<CaptureTableSummary> & typeof t;
    return { name: t.name, columns: t.columns, rows: t.rows, time_column: s.time_column ?? null, first: s.first ?? null, last: s.last ?? null };
  });
}

/** The capture is ingested, else Conflict (409, capture_not_ingested). */
export function requireIngested(c: CaptureView): CaptureTableSummary[] {
  if (c.state !== 'ingested') {
    throw new Conflict(`capture ${c.id} is ${c.state}, not ingested yet: it has no rows to read`, 'capture_not_ingested');
  }
  return tableSummaries(c);
}

/** The capture's table of that name (as spelled, else the one name equal regardless of case), else 404 table_not_found listing its tables. */
export function findTable(c: CaptureView, tables: CaptureTableSummary[], name: string): CaptureTableSummary {
  const found = tables.find((t) => t.name === name) ?? tables.find((t) => t.name.toLowerCase() === name.toLowerCase());
  if (found) return found;
  const list = tables.length ? `its tables: ${tables.map((t) => t.name).join(', ')}` : 'it has no tables';
  throw new DomainError('not_found', 'table_not_found', `capture ${c.id} has no table ${JSON.stringify(name)} (${list})`);
}
