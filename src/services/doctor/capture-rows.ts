/**
 * The `capture_rows` check of `rigd doctor` and /healthz: every ingested capture still has, in the
 * capture store, the rows its import recorded on it (captures.tables: rows per table). A store file
 * lost or replaced by an old copy, a schema dropped, a table emptied: the captures concerned are named,
 * with the fix (`rigd captures reimport`). Cost: one scan of the capture_id index per store table the
 * catalog names for the captures; /healthz reuses its result for captures.rows_check_s seconds.
 */
import type { Config } from '../../config/schema.ts';
import { captureRowCounts, rowsOf } from '../../db/capture-store/row-counts.ts';
import { ingestedCaptures, ingestedCapturesReadOnly, type IngestedCapture } from '../../db/diagnostics/ingested.ts';
import { databaseSite } from '../../db/site.ts';
import type { Database } from '../../db/index.ts';
import { errorText, fail, ok, type Finding } from './finding.ts';

export interface MissingRows {
  id: number;
  table: string;
  recorded: number;
  found: number;
}

/** Captures named in a message at most. */
const NAMED = 10;

/** Tables of ingested captures whose rows in the store differ from what their import recorded. */
export async function findMissingRows(config: Readonly<Config>, captures: IngestedCapture[]): Promise<MissingRows[]> {
  const expected = captures.flatMap((c) => c.tables.filter((t) => t.rows > 0).map((t) => ({ id: c.id, ...t })));
  if (expected.length === 0) return [];
  const counts = await captureRowCounts(config.data_dir, config.database.url, [...new Set(expected.map((e) => e.id))]);
  return expected
    .map((e) => ({ id: e.id, table: e.name, recorded: e.rows, found: rowsOf(counts, e.id, e.name) }))
    .filter((m) => m.found < m.recorded);
}

/** "2 ingested capture(s) have rows missing from the capture store: capture 3 (frames: 0 of 20 rows), ..." */
export function describeMissing(missing: MissingRows[]): string {
  const ids = [...new Set(missing.map((m) => m.id))];
  const named = ids.slice(0, NAMED).map((id) => {
    const parts = missing.filter((m) => m.id === id).map((m) => `${m.table}: ${m.found} of ${m.recorded} rows`);
    return `capture ${id} (${parts.join(', ')})`;
  });
  const more = ids.length > NAMED ? ` and ${ids.length - NAMED} more` : '';
  return `${ids.length} ingested capture(s) have rows missing from the capture store: ${named.join(', ')}${more}`;
}

export const REIMPORT_FIX = 'rebuild them from storage with rigd serve running: rigd captures reimport --all --wait (or --rig ID, --since T)';

/** The doctor's check, read-only. */
export async function checkCaptureRows(config: Readonly<Config>): Promise<Finding> {
  try {
    const captures = await ingestedCapturesReadOnly(databaseSite(config.data_dir, config.database.url));
    if (captures === null) return ok('capture_rows', 'no database yet: no ingested capture');
    const missing = await findMissingRows(config, captures);
    if (missing.length > 0) return fail('capture_rows', describeMissing(missing), REIMPORT_FIX);
    return ok('capture_rows', `all ${captures.length} ingested capture(s) have their rows in the capture store`);
  } catch (err) {
    return fail('capture_rows', `the ingested captures cannot be checked against the capture store: ${errorText(err)}`, 'see the database and capture_store lines above');
  }
}

/** /healthz's check: 'ok' or what is missing, counted again at most every captures.rows_check_s. */
export class CaptureRowsHealth {
  #last: { at: number; value: Promise<string> } | undefined;

  constructor(
    private readonly db: Database,
    private readonly config: Readonly<Config>,
  ) {}

  check(): Promise<string> {
    const now = Date.now();
    if (!this.#last || now - this.#last.at >= this.config.captures.rows_check_s * 1000) {
      const value = this.#count();
      // A result still counting is answered by the previous one, so /healthz never waits for a recount.
      const previous = this.#last?.value;
      this.#last = { at: now, value };
      if (previous) return previous;
    }
    return this.#last.value;
  }

  async #count(): Promise<string> {
    try {
      const missing = await findMissingRows(this.config, await ingestedCaptures(this.db));
      return missing.length === 0 ? 'ok' : `${describeMissing(missing)}; ${REIMPORT_FIX}`;
    } catch (err) {
      return `cannot check the capture store: ${errorText(err)}`;
    }
  }
}
