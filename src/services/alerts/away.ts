/**
 * rigd away is not a rig gone dark: while no node ran, no rig could report. The alerts sweep counts a
 * rig's silence from the later of its last report and the time since which rigd has run without a
 * break (the nodes' registry: each node's run from its start to its clean stop, or to its last
 * heartbeat plus the time it stays live after it).
 */
import { readNodes, type NodeRow } from '../../db/nodes.ts';
import type { Database } from '../../db/index.ts';

type Run = Pick<NodeRow, 'startedAt' | 'heartbeatAt' | 'stoppedAt'>;

/**
 * Since when some node has been running without a break up to now; null when no node runs now
 * (a sweep outside `rigd serve`: nothing is known, and no silence is forgiven).
 */
export function runningSince(nodes: Run[], now: Date, liveMs: number): Date | null {
  const runs = nodes.map((n) => ({ from: n.startedAt.getTime(), to: Math.min(n.stoppedAt?.getTime() ?? Infinity, n.heartbeatAt.getTime() + liveMs) }));
  let since = now.getTime();
  if (!runs.some((r) => r.from <= since && r.to >= since)) return null;
  for (let earlier = true; earlier; ) {
    earlier = false;
    for (const r of runs) {
      if (r.from < since && r.to >= since) {
        since = r.from;
        earlier = true;
      }
    }
  }
  return new Date(since);
}

/** runningSince by the nodes' registry. */
export async function rigdRunningSince(db: Database, now: Date, liveMs: number): Promise<Date | null> {
  const { nodes } = await readNodes(db);
  return runningSince(nodes, now, liveMs);
}
