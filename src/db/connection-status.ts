/**
 * The connections a process holds beside its pool (PostgreSQL: LISTEN, the capture store), each
 * saying whether it is up. /healthz names every one of them; each connection owns its own status
 * and adds itself here while it is open. Empty on SQLite.
 */
export interface ConnectionPart {
  /** The /healthz check name: `listen`, `capture_store`. */
  readonly part: string;
  /** 'ok', or what is wrong (and that it is reconnecting). */
  status(): string;
}

const parts = new Set<ConnectionPart>();

/** Adds a connection to the process's list; the function returned takes it out. */
export function addConnectionPart(part: ConnectionPart): () => void {
  parts.add(part);
  return () => void parts.delete(part);
}

/** Every open connection's status by part name (a part held twice is down when either is). */
export function connectionStatus(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of parts) {
    const s = p.status();
    if (out[p.part] === undefined || out[p.part] === 'ok') out[p.part] = s;
  }
  return out;
}

/** When a connection of this process (pooled or dedicated) last broke, ms since the epoch; 0: never. */
let lastLossAt = 0;

/** Records that a connection of this process broke now (server restart, failover, network). */
export function noteConnectionLost(now = Date.now()): void {
  lastLossAt = now;
}

/** True when a connection of this process broke at or after `since` (ms since the epoch). */
export function connectionLostSince(since: number): boolean {
  return lastLossAt >= since;
}
