import path from 'node:path';
import type { Config } from '../../config/schema.ts';
import { recentNodes, soleServeRunning, type SeenNode } from '../../db/diagnostics/nodes.ts';
import { databaseSite } from '../../db/site.ts';
import { LIVE_HEARTBEATS } from '../cluster/live.ts';
import { errorText, ok, warn, type Finding } from './finding.ts';
import { timeAgo } from '../time-ago.ts';

/** Nodes gone quiet within this long are still named (as no longer live). */
const RECENT_MS = 86_400_000;

/**
 * The `nodes` check: the `rigd serve` processes registered in the database (src/db/nodes.ts). Names
 * each live node (heartbeat within 3 x cluster.heartbeat_s) and its last heartbeat; nodes heard from
 * in the last day that are no longer live and did not stop cleanly make it a warn (a node died or
 * lost the database). Reads only, like every check.
 */
export async function checkNodes(config: Readonly<Config>): Promise<Finding> {
  const liveS = LIVE_HEARTBEATS * config.cluster.heartbeat_s;
  const site = databaseSite(config.data_dir, config.database.url);
  let nodes: SeenNode[] | null;
  try {
    nodes = await recentNodes(site, RECENT_MS);
  } catch (err) {
    return warn('nodes', `the node registry cannot be read: ${errorText(err)}`, 'see the database line above');
  }
  if (nodes === null) return ok('nodes', 'no node registry yet (rigd serve or rigd migrate creates it)');
  const live = nodes.filter((n) => !n.stopped && n.ageS < liveS);
  const lost = nodes.filter((n) => !n.stopped && n.ageS >= liveS);
  // A database file: a rigd serve that cannot write (read-only or failing disk) cannot heartbeat
  // either, but it still holds data_dir's serve lock: it runs, and cannot write.
  if (live.length === 0 && (await soleServeRunning(site)) === true) {
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
