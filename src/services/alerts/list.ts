import { ackIncident, incidentById, openIncidents, recentIncidents, type IncidentRow } from '../../db/incidents.ts';
import type { Database } from '../../db/index.ts';
import type { Reader } from '../../db/reader.ts';
import { databaseNow } from '../../db/clock.ts';
import { NotFound, Conflict } from '../../errors.ts';
import { outageRigs } from './rig-plan.ts';

/** An incident as the CLI, the pages and JSON show it (times ISO 8601 UTC ending in Z). */
export interface IncidentView {
  id: number;
  kind: string;
  subject: string | null;
  /** open, acked (open, no repeats) or resolved. */
  state: 'open' | 'acked' | 'resolved';
  opened_at: string;
  last_notified_at: string;
  resolved_at: string | null;
  acked_at: string | null;
  acked_by: string | null;
  /** Times offline folded into a flapping rig's incident. */
  count: number;
  /** fleet_outage: the rigs silent (while open) or still missing (resolved). */
  rigs?: string[];
  text: string;
}

/** Resolved incidents a listing shows (besides every open one). */
export const RECENT_HOURS = 24;
export const RECENT_LIMIT = 100;

export function incidentView(r: IncidentRow): IncidentView {
  const missing = Array.isArray(r.details.missing) ? (r.details.missing as unknown[]).map(String) : null;
  return {
    id: r.id,
    kind: r.kind,
    subject: r.subject,
    state: r.resolved_at ? 'resolved' : r.acked_at ? 'acked' : 'open',
    opened_at: r.opened_at.toISOString(),
    last_notified_at: r.last_notified_at.toISOString(),
    resolved_at: r.resolved_at?.toISOString() ?? null,
    acked_at: r.acked_at?.toISOString() ?? null,
    acked_by: r.acked_by,
    count: r.count,
    ...(r.kind === 'fleet_outage' ? { rigs: r.resolved_at && missing ? missing : outageRigs(r) } : {}),
    text: typeof r.details.text === 'string' ? r.details.text : r.kind,
  };
}

/** Open incidents (newest first), then those resolved in the last RECENT_HOURS. Plain SQL: the CLI runs it without Sequelize. */
export async function listIncidents(reader: Reader, now: Date): Promise<IncidentView[]> {
  return (await recentIncidents(reader, new Date(now.getTime() - RECENT_HOURS * 3600_000), RECENT_LIMIT)).map(incidentView);
}

/** Every open incident, oldest first (the banner of the rigs page and the map). */
export async function openIncidentViews(reader: Reader): Promise<IncidentView[]> {
  return (await openIncidents(reader)).map(incidentView);
}

/** `rigd alerts ack ID`: no more repeats of an open incident (it still resolves by itself). */
export async function acknowledge(db: Database, id: number, by: string): Promise<IncidentView> {
  const row = await incidentById(db, id);
  if (!row) throw new NotFound(`incident ${id}`, 'incident_not_found');
  if (row.acked_at) throw new Conflict(`incident ${id} was acknowledged at ${row.acked_at.toISOString()} by ${row.acked_by ?? 'someone'}`, 'incident_acked');
  if (!(await ackIncident(db, id, by, await databaseNow(db)))) throw new Conflict(`incident ${id} was acknowledged meanwhile`, 'incident_acked');
  return incidentView((await incidentById(db, id))!);
}
