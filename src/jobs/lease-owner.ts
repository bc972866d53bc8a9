import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * Lease owners are "<host>/<pid>/<random>". A runner reclaims a job leased by an owner that is
 * certainly dead: same host and a pid that no longer exists (the previous `rigd serve` on this
 * box), or its own pid but not a runner of this process (a restarted container keeps its pid).
 * Anything else (another host, a pid that is alive) waits for the lease to expire.
 */

const liveOwners = new Set<string>();

/** A new owner id for a runner of this process; forget it with releaseLeaseOwner when it stops. */
export function newLeaseOwner(): string {
  const owner = `${hostname()}/${process.pid}/${randomBytes(6).toString('hex')}`;
  liveOwners.add(owner);
  return owner;
}

export function releaseLeaseOwner(owner: string): void {
  liveOwners.delete(owner);
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

/** True when the owner's process is known to be gone. */
export function ownerIsDead(owner: string): boolean {
  const match = /^(.*)\/(\d+)\/[0-9a-f]+$/.exec(owner);
  if (!match || match[1] !== hostname()) return false;
  const pid = Number(match[2]);
  if (pid === process.pid) return !liveOwners.has(owner);
  return !pidAlive(pid);
}
