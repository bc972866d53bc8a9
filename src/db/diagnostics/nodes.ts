/**
 * The node registry as `rigd doctor` reads it, without the app: nodes heard from within a while,
 * with the age of their last heartbeat (by the server's clock on a server database).
 */
import { serveLockHeld } from '../serve-lock.ts';
import { readDatabaseFile } from './file-database.ts';
import type { DatabaseSite } from '../site.ts';
import { readServerDatabase } from './server-client.ts';

export interface SeenNode {
  instanceId: string;
  hostname: string;
  pid: number;
  version: string;
  /** Seconds since its last heartbeat. */
  ageS: number;
  stopped: boolean;
}

/** A DATE column as Sequelize writes it on SQLite ("2026-11-24 13:06:18.123 +00:00"). */
function fileDate(text: string): Date {
  return new Date(text.replace(' ', 'T').replace(' ', ''));
}

/** Nodes whose last heartbeat is younger than recentMs, by instance id; null when there is no registry yet. */
export async function recentNodes(site: DatabaseSite, recentMs: number): Promise<SeenNode[] | null> {
  if (site.kind === 'server') {
    return readServerDatabase(site.url, async (client) => {
      const { rows: exists } = await client.query<{ t: string | null }>("SELECT to_regclass('nodes')::text AS t");
      if (!exists[0]?.t) return null;
      const { rows } = await client.query<{ instance_id: string; hostname: string; pid: number; version: string; age_s: number; stopped: boolean }>(
        `SELECT instance_id, hostname, pid, version, extract(epoch FROM now() - heartbeat_at)::float8 AS age_s, stopped_at IS NOT NULL AS stopped
           FROM nodes WHERE heartbeat_at > now() - make_interval(secs => $1) ORDER BY instance_id`,
        [recentMs / 1000],
      );
      return rows.map((r) => ({ instanceId: r.instance_id, hostname: r.hostname, pid: Number(r.pid), version: r.version, ageS: Number(r.age_s), stopped: r.stopped }));
    });
  }
  const nodes = await readDatabaseFile(site.dataDir, async (all, has) => {
    if (!(await has('nodes'))) return null;
    const rows = await all<{ instance_id: string; hostname: string; pid: number; version: string; heartbeat_at: string; stopped_at: string | null }>(
      'SELECT instance_id, hostname, pid, version, heartbeat_at, stopped_at FROM nodes ORDER BY instance_id',
    );
    const now = Date.now();
    return rows
      .map((r) => ({ instanceId: r.instance_id, hostname: r.hostname, pid: Number(r.pid), version: r.version, ageS: (now - fileDate(r.heartbeat_at).getTime()) / 1000, stopped: r.stopped_at !== null }))
      .filter((n) => n.ageS * 1000 < recentMs);
  });
  return nodes ?? null;
}

/**
 * Whether a `rigd serve` holds the database alone and runs (a file database: data_dir's serve lock,
 * src/db/serve-lock.ts); null when it cannot tell or the site has no such lock (a server).
 */
export function soleServeRunning(site: DatabaseSite): Promise<boolean | null> {
  return site.kind === 'file' ? serveLockHeld(site.dataDir) : Promise.resolve(null);
}
