/**
 * Notifications given up (notify jobs that ended failed: refused for good, target gone, or not
 * delivered within notify.retry_hours), as `rigd doctor` reads them without the app. One whose
 * target (the same webhook URL, by its hash in the payload, or the e-mail target) has delivered a
 * notification since is over: the operator fixed the target, and it is counted apart. E-mail is
 * the same target only to the same recipients (by their hash in the payload).
 */
import { forEngine, type DialectName } from '../dialect/engine.ts';
import { readDatabaseFile } from './file-database.ts';
import type { DatabaseSite } from '../site.ts';
import { readServerDatabase } from './server-client.ts';

export interface GivenUp {
  /** Given up within the window, their target silent since (nothing delivered to it after). */
  count: number;
  /** Given up within the window, their target delivered since. */
  recovered: number;
  /** The newest of them. */
  newest: { payload: string; errorCode: string | null; lastError: string | null; ageS: number } | null;
}

const WHERE = "kind = 'notify' AND state = 'failed' AND finished_at IS NOT NULL";

/** A field of a notify job's payload (null when absent). */
function field(engine: DialectName, table: string, name: string): string {
  return forEngine(engine, {
    postgres: `(${table}.payload::jsonb ->> '${name}')`,
    sqlite: `json_extract(${table}.payload, '$.${name}')`,
  });
}

/**
 * A given-up job (as table jobs) whose target has delivered a notification after it was given up:
 * the same target and webhook hash; for e-mail the same recipients' hash, unless the given-up job
 * recorded none (written before it was: any e-mail delivery counts).
 */
function deliveredSince(engine: DialectName): string {
  const f = (table: string, name: string) => field(engine, table, name);
  const same = [
    `${f('d', 'target')} = ${f('jobs', 'target')}`,
    `COALESCE(${f('d', 'hook')}, '') = COALESCE(${f('jobs', 'hook')}, '')`,
    `(${f('jobs', 'recipients')} IS NULL OR ${f('d', 'recipients')} = ${f('jobs', 'recipients')})`,
  ].join(' AND ');
  return `EXISTS (SELECT 1 FROM jobs d WHERE d.kind = 'notify' AND d.state = 'done' AND d.finished_at > jobs.finished_at AND ${same})`;
}

/** A DATE column as Sequelize writes it on SQLite ("2026-11-24 13:06:18.123 +00:00"); it sorts as text. */
function fileDateText(d: Date): string {
  return d.toISOString().replace('T', ' ').replace('Z', ' +00:00');
}

function fileDate(text: string): Date {
  return new Date(text.replace(' ', 'T').replace(' ', ''));
}

type Row = { payload: string; error_code: string | null; last_error: string | null };
type Counted<N> = { n: N; recovered: N };

const counts = (c: Counted<number | string> | undefined) => ({ count: Number(c?.n ?? 0), recovered: Number(c?.recovered ?? 0) });

/** Notify jobs given up within the last windowMs; null when there is no database or jobs table yet. */
export async function givenUpNotifications(site: DatabaseSite, windowMs: number): Promise<GivenUp | null> {
  if (site.kind === 'server') {
    return readServerDatabase(site.url, async (client) => {
      const { rows: exists } = await client.query<{ t: string | null }>("SELECT to_regclass('jobs')::text AS t");
      if (!exists[0]?.t) return null;
      const since = 'finished_at > now() - make_interval(secs => $1)';
      const recovered = deliveredSince('postgres');
      const { rows: counted } = await client.query<Counted<string>>(
        `SELECT count(*) FILTER (WHERE NOT ${recovered}) AS n, count(*) FILTER (WHERE ${recovered}) AS recovered FROM jobs WHERE ${WHERE} AND ${since}`,
        [windowMs / 1000],
      );
      const { rows } = await client.query<Row & { age_s: number }>(
        `SELECT payload, error_code, last_error, extract(epoch FROM now() - finished_at)::float8 AS age_s FROM jobs WHERE ${WHERE} AND ${since} AND NOT ${recovered} ORDER BY finished_at DESC, id DESC LIMIT 1`,
        [windowMs / 1000],
      );
      const r = rows[0];
      return { ...counts(counted[0]), newest: r ? { payload: r.payload, errorCode: r.error_code, lastError: r.last_error, ageS: Number(r.age_s) } : null };
    });
  }
  const found = await readDatabaseFile(site.dataDir, async (all, has) => {
    if (!(await has('jobs'))) return null;
    const now = Date.now();
    // A literal of our own making (the reader takes no parameters).
    const since = `finished_at > '${fileDateText(new Date(now - windowMs))}'`;
    const recovered = deliveredSince('sqlite');
    const [counted] = await all<Counted<number>>(`SELECT COALESCE(SUM(NOT ${recovered}), 0) AS n, COALESCE(SUM(${recovered}), 0) AS recovered FROM jobs WHERE ${WHERE} AND ${since}`);
    const [r] = await all<Row & { finished_at: string }>(
      `SELECT payload, error_code, last_error, finished_at FROM jobs WHERE ${WHERE} AND ${since} AND NOT ${recovered} ORDER BY finished_at DESC, id DESC LIMIT 1`,
    );
    return { ...counts(counted), newest: r ? { payload: r.payload, errorCode: r.error_code, lastError: r.last_error, ageS: (now - fileDate(r.finished_at).getTime()) / 1000 } : null };
  });
  return found ?? null;
}
