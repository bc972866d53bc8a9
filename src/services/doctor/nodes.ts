import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config/schema.ts';
import { isPostgresUrl } from '../../db/database-url.ts';
import { DB_FILE } from '../../db/file.ts';
import { serveLockHeld } from '../../db/serve-lock.ts';
import { openSqliteReadOnly } from '../../db/sqlite-read-only.ts';
import { LIVE_HEARTBEATS } from '../cluster/live.ts';
import { errorText, ok, warn, type Finding } from './finding.ts';
import { timeAgo } from '../time-ago.ts';

/** Nodes gone quiet within this long are still named (as no longer live). */
const RECENT_MS = 86_400_000;

interface SeenNode {
  instanceId: string;
  hostname: string;
  pid: number;
  version: string;
  /** Seconds since its last heartbeat, by the database's clock on PostgreSQL. */
  ageS: number;
  stopped: boolean;
}

/**
 * The `nodes` check: the `rigd serve` processes registered in the database (src/db/nodes.ts). Names
 * each live node (heartbeat within 3 x cluster.heartbeat_s) and its last heartbeat; nodes heard from
 * in the last day that are no longer live and did not stop cleanly make it a warn (a node died or
 * lost the database). Reads only, like every check.
 */
export async function checkNodes(config: Readonly<Config>): Promise<Finding> {
  const liveS = LIVE_HEARTBEATS * config.cluster.heartbeat_s;
  let nodes: SeenNode[] | null;
  try {
    nodes = isPostgresUrl(config.database.url) ? await pgNodes(config.database.url) : await sqliteNodes(config.data_dir);
  } catch (err) {
    return warn('nodes', `the node registry cannot be read: ${errorText(err)}`, 'see the database line above');
  }
  if (nodes === null) return ok('nodes', 'no node registry yet (rigd serve or rigd migrate creates it)');
  const live = nodes.filter((n) => !n.stopped && n.ageS < liveS);
  const lost = nodes.filter((n) => !n.stopped && n.ageS >= liveS);
  // SQLite: a rigd serve that cannot write (read-only or failing disk) cannot heartbeat either, but
  // it still holds data_dir's serve lock: it runs, and cannot write.
  if (live.length === 0 && !isPostgresUrl(config.database.url) && (await serveLockHeld(config.data_dir)) === true) {
    const last = [...lost].sort((x, y) => x.ageS - y.ageS)[0];
    return warn(
      'nodes',
      `rigd serve runs (it holds ${path.join(config.data_dir, 'serve.lock')})${last ? ` as ${describe(last)}` : ''} but cannot write its heartbeat: it cannot write the database`,
      'see the data_dir and database lines above (read-only or failing disk?) and its journal (journalctl -u rigd)',
    );
  }
  const liveText = live.length ? `${live.length} live: ${live.map(describe).join('; ')}` : 'no live node (rigd serve is not running)';
  if (lost.length === 0) return ok('nodes', liveText);
  return warn(
    'nodes',
    `${liveText}; no longer live without a clean stop: ${lost.map(describe).join('; ')}`,
    'see that node\'s journal (journalctl -u rigd); a node removed for good drops out of this list after a day',
  );
}

function describe(n: SeenNode): string {
  return `${n.instanceId} (${n.hostname}, pid ${n.pid}, rigd ${n.version}, heartbeat ${secondsAgo(n.ageS)})`;
}

function secondsAgo(s: number): string {
  const now = new Date();
  return timeAgo(new Date(now.getTime() - s * 1000), now, { short: true });
}

async function pgNodes(url: string): Promise<SeenNode[] | null> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, application_name: 'rigd doctor', connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
    const { rows: exists } = await client.query<{ t: string | null }>("SELECT to_regclass('nodes')::text AS t");
    if (!exists[0]?.t) return null;
    const { rows } = await client.query<{ instance_id: string; hostname: string; pid: number; version: string; age_s: number; stopped: boolean }>(
      `SELECT instance_id, hostname, pid, version, extract(epoch FROM now() - heartbeat_at)::float8 AS age_s, stopped_at IS NOT NULL AS stopped
         FROM nodes WHERE heartbeat_at > now() - make_interval(secs => $1) ORDER BY instance_id`,
      [RECENT_MS / 1000],
    );
    return rows.map((r) => ({ instanceId: r.instance_id, hostname: r.hostname, pid: Number(r.pid), version: r.version, ageS: Number(r.age_s), stopped: r.stopped }));
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A DATE column as Sequelize writes it on SQLite ("2026-11-24 13:06:18.123 +00:00"). */
function sqliteDate(text: string): Date {
  return new Date(text.replace(' ', 'T').replace(' ', ''));
}

async function sqliteNodes(dataDir: string): Promise<SeenNode[] | null> {
  const file = path.resolve(dataDir, DB_FILE);
  if (!existsSync(file)) return null;
  const ro = await openSqliteReadOnly(file);
  const all = <T>(sql: string) => new Promise<T[]>((resolve, reject) => ro.db.all(sql, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
  try {
    const tables = await all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'nodes'");
    if (tables.length === 0) return null;
    const rows = await all<{ instance_id: string; hostname: string; pid: number; version: string; heartbeat_at: string; stopped_at: string | null }>(
      'SELECT instance_id, hostname, pid, version, heartbeat_at, stopped_at FROM nodes ORDER BY instance_id',
    );
    const now = Date.now();
    return rows
      .map((r) => ({ instanceId: r.instance_id, hostname: r.hostname, pid: Number(r.pid), version: r.version, ageS: (now - sqliteDate(r.heartbeat_at).getTime()) / 1000, stopped: r.stopped_at !== null }))
      .filter((n) => n.ageS * 1000 < RECENT_MS);
  } finally {
    await ro.close();
  }
}
