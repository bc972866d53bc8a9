/**
 * The `duties` check of `rigd doctor`: which node runs the cluster duties (upload expiry, retention,
 * alerts; src/services/cluster/duties.ts). PostgreSQL: the node whose session holds the duties lock,
 * by instance id, host and pid; nobody holding it is a warn (nothing expires uploads, prunes history
 * or raises alerts), and so is a holder that no longer heartbeats (frozen: it keeps the lock until
 * the server ends its idle session). SQLite: the one rigd serve of the data_dir runs them.
 */
import type { Config } from '../../config/schema.ts';
import { dutiesHolder, type DutiesHolder } from '../../db/diagnostics/duties.ts';
import { soleServeRunning } from '../../db/diagnostics/nodes.ts';
import { databaseSite } from '../../db/site.ts';
import { LIVE_HEARTBEATS } from '../cluster/live.ts';
import { timeAgo } from '../time-ago.ts';
import { errorText, ok, warn, type Finding } from './finding.ts';

const CHECK = 'duties';
const DUTIES = 'upload expiry, retention and alerts';

export async function checkDuties(config: Readonly<Config>): Promise<Finding> {
  const site = databaseSite(config.data_dir, config.database.url);
  if (site.kind === 'file') {
    const running = await soleServeRunning(site).catch(() => null);
    return ok(CHECK, `SQLite: the one rigd serve of this data_dir runs them (upload expiry, retention, alerts)${running === false ? '; it is not running now' : ''}`);
  }
  let holder: DutiesHolder | null;
  try {
    holder = await dutiesHolder(site.url);
  } catch (err) {
    return warn(CHECK, `who holds the cluster duties cannot be read: ${errorText(err)}`, 'see the database line above');
  }
  if (!holder) {
    return warn(
      CHECK,
      `held by nobody: ${DUTIES} run on no node`,
      `start rigd serve on a node (systemctl start rigd); a running node takes them within cluster.heartbeat_s (${config.cluster.heartbeat_s} s): if one runs and this stays, see its journal (journalctl -u rigd)`,
    );
  }
  const n = holder.node;
  if (!n) {
    const from = holder.client ? ` from ${holder.client}` : '';
    return warn(
      CHECK,
      `held by a session${from} that names no registered node (application_name "${holder.session}"): a rigd older than this one?`,
      'upgrade every node to the same rigd version; the lock holder runs the duties meanwhile',
    );
  }
  const who = `node ${n.instanceId} (${n.hostname}, pid ${n.pid})`;
  const liveS = LIVE_HEARTBEATS * config.cluster.heartbeat_s;
  if (n.stopped || n.ageS >= liveS) {
    const now = new Date();
    const since = timeAgo(new Date(now.getTime() - n.ageS * 1000), now, { short: true });
    return warn(
      CHECK,
      `held by ${who}, which ${n.stopped ? 'stopped' : 'is no longer live'} (heartbeat ${since}): ${DUTIES} may not run`,
      `see that node's journal (journalctl -u rigd); a frozen node keeps them until the database ends its idle session, a stopped one frees them at once`,
    );
  }
  return ok(CHECK, `held by ${who}: ${DUTIES} run there`);
}
