/**
 * The `capture_rows` check of `rigd doctor` and /healthz: every ingested capture still has, in the
 * capture store, the rows its import recorded on it (captures.tables: rows per table). A store file
 * lost or replaced by an old copy, a schema dropped, a table emptied: the captures concerned are named,
 * with the fix (`rigd captures reimport`). Cost: one scan of the capture_id index per store table the
 * catalog names for the captures; /healthz reuses its result for captures.rows_check_s seconds.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config/schema.ts';
import { captureRowCounts, rowsOf } from '../../db/capture-store/row-counts.ts';
import { isPostgresUrl } from '../../db/database-url.ts';
import { DB_FILE } from '../../db/file.ts';
import type { Database } from '../../db/index.ts';
import { openSqliteReadOnly } from '../../db/sqlite-read-only.ts';
import { errorText, fail, ok, type Finding } from './finding.ts';

/** An ingested capture and the rows per table its import recorded. */
export interface IngestedCapture {
  id: number;
  tables: { name: string; rows: number }[];
}

export interface MissingRows {
  id: number;
  table: string;
  recorded: number;
  found: number;
}

/** Captures named in a message at most. */
const NAMED = 10;

const INGESTED_SQL = "SELECT c.id AS id, c.tables AS tables FROM captures c JOIN jobs j ON j.id = c.job_id WHERE j.state = 'done' ORDER BY c.id";

function parseTables(text: unknown): { name: string; rows: number }[] {
  if (typeof text !== 'string' || text === '') return [];
  try {
    const list = JSON.parse(text) as { name?: unknown; rows?: unknown }[];
    return Array.isArray(list) ? list.filter((t) => typeof t?.name === 'string').map((t) => ({ name: String(t.name), rows: Number(t.rows) || 0 })) : [];
  } catch {
    return [];
  }
}

function toIngested(rows: { id: unknown; tables: unknown }[]): IngestedCapture[] {
  return rows.map((r) => ({ id: Number(r.id), tables: parseTables(r.tables) }));
}

/** The ingested captures, through the app's database (rigd serve). */
export async function ingestedFromApp(db: Database): Promise<IngestedCapture[]> {
  const rows = await db.models.Capture.findAll({
    attributes: ['id', 'tables'],
    include: [{ association: 'job', required: true, attributes: [], where: { state: 'done' } }],
    order: [['id', 'ASC']],
  });
  return toIngested(rows.map((r) => ({ id: r.id, tables: r.tables })));
}

/** The ingested captures, read-only without the app (rigd doctor); null when there is no database yet. */
async function ingestedReadOnly(config: Readonly<Config>): Promise<IngestedCapture[] | null> {
  if (isPostgresUrl(config.database.url)) {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: config.database.url, application_name: 'rigd doctor', connectionTimeoutMillis: 10_000 });
    try {
      await client.connect();
      const { rows: exists } = await client.query<{ c: string | null; j: string | null }>("SELECT to_regclass('captures')::text AS c, to_regclass('jobs')::text AS j");
      if (!exists[0]?.c || !exists[0]?.j) return null;
      return toIngested((await client.query<{ id: unknown; tables: unknown }>(INGESTED_SQL)).rows);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  const file = path.resolve(config.data_dir, DB_FILE);
  if (!existsSync(file)) return null;
  const ro = await openSqliteReadOnly(file);
  const all = <T>(sql: string) => new Promise<T[]>((resolve, reject) => ro.db.all(sql, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
  try {
    const tables = await all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('captures', 'jobs')");
    if (tables.length < 2) return null;
    return toIngested(await all<{ id: unknown; tables: unknown }>(INGESTED_SQL));
  } finally {
    await ro.close();
  }
}

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
    const captures = await ingestedReadOnly(config);
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
      const missing = await findMissingRows(this.config, await ingestedFromApp(this.db));
      return missing.length === 0 ? 'ok' : `${describeMissing(missing)}; ${REIMPORT_FIX}`;
    } catch (err) {
      return `cannot check the capture store: ${errorText(err)}`;
    }
  }
}
