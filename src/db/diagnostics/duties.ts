/**
 * Who holds the cluster duties lock (src/db/cluster-lock.ts), as `rigd doctor` reads it without the
 * app: the session holding the advisory lock in pg_locks, its application_name ("rigd duties <run
 * id>") and the registered node of that run (src/db/nodes.ts). PostgreSQL only: on SQLite the one
 * rigd serve of a data_dir runs the duties, there is no lock to read.
 */
import { DUTIES_LOCK_KEY, DUTIES_SESSION } from '../cluster-lock.ts';
import { readServerDatabase } from './server-client.ts';

/** The node of the holding session, when the registry knows its run. */
export interface DutiesNode {
  instanceId: string;
  hostname: string;
  pid: number;
  /** Seconds since its last heartbeat (by the server's clock). */
  ageS: number;
  stopped: boolean;
}

export interface DutiesHolder {
  /** The holding session's application_name. */
  session: string;
  /** The holding session's client address; null over a Unix socket or when not visible. */
  client: string | null;
  node: DutiesNode | null;
}

/** The holder of the duties lock; null when nobody holds it. */
export async function dutiesHolder(url: string): Promise<DutiesHolder | null> {
  return readServerDatabase(url, async (client) => {
    const { rows: exists } = await client.query<{ t: string | null }>("SELECT to_regclass('nodes')::text AS t");
    const registry = Boolean(exists[0]?.t);
    // A bigint advisory key shows as classid (high half), objid (low half) and objsubid 1.
    const { rows } = await client.query<{ app: string; client: string | null; instance_id: string | null; hostname: string | null; pid: number | null; age_s: number | null; stopped: boolean | null }>(
      `SELECT a.application_name AS app, host(a.client_addr) AS client,
              ${registry ? 'n.instance_id, n.hostname, n.pid, extract(epoch FROM now() - n.heartbeat_at)::float8 AS age_s, n.stopped_at IS NOT NULL AS stopped' : 'NULL AS instance_id, NULL AS hostname, NULL AS pid, NULL AS age_s, NULL AS stopped'}
         FROM pg_locks l
         JOIN pg_stat_activity a ON a.pid = l.pid
         ${registry ? "LEFT JOIN nodes n ON n.run_id IS NOT NULL AND a.application_name = $3 || ' ' || n.run_id" : ''}
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid::int8 = $1 AND l.objid::int8 = $2
        LIMIT 1`,
      [String(DUTIES_LOCK_KEY >> 32n), String(DUTIES_LOCK_KEY & 0xffffffffn), ...(registry ? [`rigd ${DUTIES_SESSION}`] : [])],
    );
    const r = rows[0];
    if (!r) return null;
    const node = r.instance_id === null ? null : { instanceId: r.instance_id, hostname: r.hostname ?? '', pid: Number(r.pid), ageS: Number(r.age_s), stopped: r.stopped === true };
    return { session: r.app, client: r.client, node };
  });
}
