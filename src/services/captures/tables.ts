/**
 * A capture's tables as recorded on it once imported (captures.tables, layout.ts's
 * CaptureTableSummary), and the checks every reader of one table makes: the capture is ingested and
 * has that table.
 */
import type { CaptureTableSummary } from '../../db/capture-store/layout.ts';
import { Conflict, DomainError } from '../../errors.ts';
import { shellWord } from '../shell-word.ts';
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

/** Why a capture that is not ingested has no rows, and what to do about it when something can be done. */
export function notIngestedText(c: Pick<CaptureView, 'id' | 'key' | 'state' | 'error_code' | 'last_error'>): string {
  const again = `rigd ingest ${shellWord(c.key)}`;
  switch (c.state) {
    case 'failed': {
      const why = c.last_error ? `: ${c.last_error.split('\n')[0]!.replace(/\.$/, '')}` : '';
      return `capture ${c.id} failed (${c.error_code ?? 'error'})${why}; ${again} queues it again`;
    }
    case 'uploaded':
      return `capture ${c.id} is not queued for ingestion, so it has no rows to read; ${again} queues it`;
    case 'queued':
      return `capture ${c.id} is queued for ingestion and has no rows to read yet`;
    default:
      return `capture ${c.id} is being ingested and has no rows to read yet`;
  }
}

/** The capture is ingested, else Conflict (409, capture_not_ingested) saying why not. */
export function requireIngested(c: CaptureView): CaptureTableSummary[] {
  if (c.state !== 'ingested') throw new Conflict(notIngestedText(c), 'capture_not_ingested');
  return tableSummaries(c);
}

/** The capture's table of that name (as spelled, else the one name equal regardless of case), else 404 table_not_found listing its tables. */
export function findTable(c: CaptureView, tables: CaptureTableSummary[], name: string): CaptureTableSummary {
  const found = tables.find((t) => t.name === name) ?? tables.find((t) => t.name.toLowerCase() === name.toLowerCase());
  if (found) return found;
  const list = tables.length ? `its tables: ${tables.map((t) => t.name).join(', ')}` : 'it has no tables';
  throw new DomainError('not_found', 'table_not_found', `capture ${c.id} has no table ${JSON.stringify(name)} (${list})`);
}
