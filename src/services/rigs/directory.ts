import type { Database, Transaction } from '../../db/index.ts';
import { rigBoundTo, setCurrentProject } from '../../db/rigs.ts';
import type { RigDirectory } from '../uploads/service.ts';

/** How long an address -> rig answer is reused (a report from the address ends it at once). */
const CACHE_MS = 5000;
/** Addresses remembered at most (a /16 VPN has at most 65,536). */
const CACHE_MAX = 65_536;

/**
 * Rigs as uploads see them: found by the VPN address they are bound to (rigs.address_binding). Every reservation asks, so
 * an answer (a miss too) is kept for a few seconds instead of a query per request; a committed
 * report from an address forgets it, so a rig's first upload right after its first report is linked.
 */
export function rigDirectory(db: Database, now: () => number = Date.now): RigDirectory & { forget(address: string): void } {
  const cache = new Map<string, { rigId: string | null; at: number }>();
  return {
    async findByVpnAddress(address: string) {
      const hit = cache.get(address);
      if (hit && now() - hit.at < CACHE_MS) return hit.rigId;
      const rigId = await rigBoundTo(db, address);
      if (cache.size >= CACHE_MAX) cache.clear();
      cache.set(address, { rigId, at: now() });
      return rigId;
    },
    forget(address: string) {
      cache.delete(address);
    },
    async setCurrentProject(rigId: string, project: string, t: Transaction) {
      await setCurrentProject(db, rigId, project, t);
    },
  };
}
