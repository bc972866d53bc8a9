import type { Transaction } from '../../db/index.ts';

/** One transition of an incident, as the alerts service hands it to onIncident (delivery). */
export interface IncidentEvent {
  event: 'opened' | 'repeated' | 'resolved';
  incident: { id: number; kind: string; subject: string | null; opened_at: string; resolved_at: string | null };
  /** The rig concerned (rig_offline and identity kinds): where and when it was last heard of. */
  rig: { id: string; last_seen: string | null; latitude: number | null; longitude: number | null; last_fix_at: string | null; version: string | null; branch: string | null } | null;
  /** fleet_outage: the rigs silent (opened) or still missing (resolved). */
  rigs?: string[];
  /** One line a person reads: which rig, since when, where it was last (times ISO 8601 UTC ending in Z). */
  text: string;
}

/** Called inside the write transaction of each transition: what it writes commits with the transition. */
export type OnIncident = (event: IncidentEvent, transaction: Transaction) => Promise<void>;

/** The kinds of incident. */
export const INCIDENT_KINDS = ['rig_offline', 'fleet_outage', 'capture_failed', 'disk_low', 'ingest_backlog', 'node_down', 'rig_refused', 'key_refused'] as const;
export type IncidentKind = (typeof INCIDENT_KINDS)[number];
