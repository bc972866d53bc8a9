/**
 * The ingested captures (job done) and the rows per table their import recorded (captures.tables),
 * for the capture_rows check: through the app's database, or read-only without the app (doctor).
 */
import type { Database } from '../index.ts';
import { readDatabaseFile } from './file-database.ts';
import type { DatabaseSite } from '../site.ts';
import { readServerDatabase } from './server-client.ts';

/** An ingested capture and the rows per table its import recorded. */
export interface IngestedCapture {
  id: number;
  tables: { name: string; rows: number }[];
}

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
export async function ingestedCaptures(db: Database): Promise<IngestedCapture[]> {
  const rows = await db.models.Capture.findAll({
    attributes: ['id', 'tables'],
    include: [{ association: 'job', required: true, attributes: [], where: { state: 'done' } }],
    order: [['id', 'ASC']],
  });
  return toIngested(rows.map((r) => ({ id: r.id, tables: r.tables })));
}

/** The ingested captures, read-only without the app (rigd doctor); null when there is no database yet. */
export async function ingestedCapturesReadOnly(site: DatabaseSite): Promise<IngestedCapture[] | null> {
  if (site.kind === 'server') {
    return readServerDatabase(site.url, async (client) => {
      const { rows: exists } = await client.query<{ c: string | null; j: string | null }>("SELECT to_regclass('captures')::text AS c, to_regclass('jobs')::text AS j");
      if (!exists[0]?.c || !exists[0]?.j) return null;
      return toIngested((await client.query<{ id: unknown; tables: unknown }>(INGESTED_SQL)).rows);
    });
  }
  const found = await readDatabaseFile(site.dataDir, async (all, has) => ((await has('captures', 'jobs')) ? toIngested(await all<{ id: unknown; tables: unknown }>(INGESTED_SQL)) : null));
  return found ?? null;
}
