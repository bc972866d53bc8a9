import { randomBytes } from 'node:crypto';
import type { NodeRow } from '../db/nodes.ts';

/**
 * Lease owners are "<node>/<random>": the node's name (the instance id of the rigd serve it runs
 * in, empty for a runner outside one), then a token of the runner. Whether an owner is dead comes
 * from the node registry (src/db/nodes.ts), never from host names and pids (two containers may both
 * run rigd as PID 1 on a host called "gateway"): the owner's node stopped, its heartbeat went stale,
 * or it registered again after the claim (it was restarted). A runner of this process is alive.
 * Anything else (no node, a node not registered, owners of older forms) waits for the lease to expire.
 */

const liveOwners = new Set<string>();

/** A new owner id for a runner of this process on node `node`; forget it with releaseLeaseOwner when it stops. */
export function newLeaseOwner(node = ''): string {
  if (node.includes('/')) throw new RangeError(`a node name has no "/": ${node}`);
  const owner = `${node}/${randomBytes(6).toString('hex')}`;
  liveOwners.add(owner);
  return owner;
}

export function releaseLeaseOwner(owner: string): void {
  liveOwners.delete(owner);
}

/** The node named by an owner ("<node>/<token>", or the older "<node>/<host>/<pid>/<token>"), or null. */
export function leaseOwnerNode(owner: string): string | null {
  const match = /^([^/]*)\/(?:[^/]*\/\d+\/)?[0-9a-f]+$/.exec(owner);
  return match && match[1] ? match[1] : null;
}

/** What the registry says, read once per reclaim pass. */
export interface NodeLiveness {
  /** The database's now. */
  now: Date;
  nodes: NodeRow[];
  /** A node whose heartbeat is older than this is not live. */
  staleMs: number;
}

/** Why the owner of a lease claimed at claimedAt is known to be dead, or null when it may be alive. */
export function ownerDeadReason(owner: string, claimedAt: Date | null, liveness: NodeLiveness): string | null {
  if (liveOwners.has(owner)) return null;
  const name = leaseOwnerNode(owner);
  const node = name === null ? undefined : liveness.nodes.find((n) => n.instanceId === name);
  if (!node) return null;
  if (node.stoppedAt !== null) return `node ${name} stopped`;
  const ageMs = liveness.now.getTime() - node.heartbeatAt.getTime();
  if (ageMs >= liveness.staleMs) return `node ${name} silent for ${Math.round(ageMs / 1000)} s`;
  if (claimedAt !== null && node.startedAt.getTime() > claimedAt.getTime()) return `node ${name} restarted since the claim`;
  return null;
}
