import type { RigFacts } from '../../db/rigs/listing.ts';
import type { IncidentEvent } from './event.ts';

/** Rig fields of an event, from a rigs row as read (src/db/rigs/listing.ts). */
export type { RigFacts };

export const iso = (d: Date | string) => new Date(d).toISOString();

export function rigOfEvent(r: RigFacts | undefined): IncidentEvent['rig'] {
  if (!r) return null;
  const hasFix = r.latitude !== null && r.longitude !== null;
  return {
    id: r.id,
    last_seen: iso(r.last_seen_at),
    latitude: r.latitude === null ? null : Number(r.latitude),
    longitude: r.longitude === null ? null : Number(r.longitude),
    last_fix_at: hasFix ? iso(r.last_seen_at) : null,
    version: r.version,
    branch: r.branch,
  };
}

/** Where a rig was last, in words. */
export function whereText(r: RigFacts): string {
  const at = r.latitude !== null && r.longitude !== null ? `last at ${Number(r.latitude).toFixed(5)}, ${Number(r.longitude).toFixed(5)}` : 'no position in its last report';
  return `${at}; version ${r.version ?? '?'} on ${r.branch ?? '?'}`;
}

export function rigOfflineText(r: RigFacts, intervalS: number | null, count: number): string {
  const rhythm = intervalS ? ` (it reports every ${intervalS} s)` : '';
  const flapping = count > 1 ? ` again: flapping, offline ${count} times` : '';
  return `rig ${r.id} offline${flapping}: no report since ${iso(r.last_seen_at)}${rhythm}; ${whereText(r)}`;
}

export function rigBackText(r: RigFacts, openedAt: Date): string {
  return `rig ${r.id} back: reported at ${iso(r.last_seen_at)} (offline since ${iso(openedAt)})`;
}

export function outageText(rigs: string[], fleet: number, since: Date): string {
  return `fleet outage: ${rigs.length} of ${fleet} rigs went silent together around ${iso(since)}: ${listText(rigs)}`;
}

export function outageOverText(members: number, missing: string[]): string {
  return `fleet outage over: ${members - missing.length} of ${members} rigs back${missing.length ? `; still missing: ${listText(missing)}` : ''}`;
}

/** At most 20 ids, then how many more. */
export function listText(ids: string[]): string {
  return ids.length <= 20 ? ids.join(', ') : `${ids.slice(0, 20).join(', ')} and ${ids.length - 20} more`;
}
