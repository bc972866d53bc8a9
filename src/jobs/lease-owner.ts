import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * Lease owners are "<node>/<host>/<pid>/<random>": the node's name (the instance id of the rigd
 * serve it runs in, empty for a runner outside one), then what tells a dead process from a live one.
 * A runner reclaims a job leased by an owner that is certainly dead: same host and a pid that no
 * longer exists (the previous `rigd serve` on this box), or its own pid but not a runner of this
 * process (a restarted container keeps its pid). Anything else (another host, a pid that is alive)
 * waits for the lease to expire. Owners of the older form "<host>/<pid>/<random>" are read too.
 */

/** The host part of an owner: short enough that the owner fits lease_owner (128) with a 64-character node name. */
const HOST_LENGTH = 40;

const liveOwners = new Set<string>();

function thisHost(): string {
  return hostname().slice(0, HOST_LENGTH);
}

/** A new owner id for a runner of this process on node `node`; forget it with releaseLeaseOwner when it stops. */
export function newLeaseOwner(node = ''): string {
  if (node.includes('/')) throw new RangeError(`a node name has no "/": ${node}`);
  const owner = `${node}/${thisHost()}/${process.pid}/${randomBytes(6).toString('hex')}`;
  liveOwners.add(owner);
  return owner;
}

export function releaseLeaseOwner(owner: string): void {
  liveOwners.delete(owner);
}

/** The parts of an owner id, or null for one rigd did not make. */
export function parseLeaseOwner(owner: string): { node: string | null; host: string; pid: number } | null {
  const match = /^(?:([^/]*)\/)?([^/]*)\/(\d+)\/[0-9a-f]+$/.exec(owner);
  if (!match) return null;
  return { node: match[1] ?? null, host: match[2]!, pid: Number(match[3]) };
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when `pid` on `host` is known to be gone: this host, and no such process (or this very one is asked about). */
export function hostProcessIsGone(host: string, pid: number): boolean {
  if (host.slice(0, HOST_LENGTH) !== thisHost()) return false;
  if (pid === process.pid) return false;
  return !pidAlive(pid);
}

/** True when the owner's process is known to be gone. */
export function ownerIsDead(owner: string): boolean {
  const parsed = parseLeaseOwner(owner);
  if (!parsed || parsed.host.slice(0, HOST_LENGTH) !== thisHost()) return false;
  if (parsed.pid === process.pid) return !liveOwners.has(owner);
  return !pidAlive(parsed.pid);
}
