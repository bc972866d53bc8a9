// Incident events as the alerts service hands them over, and reading notify jobs back.
import { QueryTypes } from 'sequelize';
import type { Database } from '../../../src/db/index.ts';
import type { IncidentEvent } from '../../../src/services/notify/message.ts';

export function offlineEvent(id: number, rigId = `rig-${id}`): IncidentEvent {
  return {
    event: 'opened',
    incident: { id, kind: 'rig_offline', subject: rigId, opened_at: '2026-11-26T09:00:00.000Z', resolved_at: null },
    rig: { id: rigId, last_seen: '2026-11-26T08:55:00.000Z', latitude: 47.3769, longitude: 8.5417, last_fix_at: '2026-11-26T08:54:30.000Z', version: '1.4.2', branch: 'stable' },
    text: `Rig ${rigId} is offline since 2026-11-26T09:00:00Z (last seen 08:55 UTC near 47.3769, 8.5417)`,
  };
}

export function outageEvent(id: number, rigs: string[]): IncidentEvent {
  return {
    event: 'opened',
    incident: { id, kind: 'fleet_outage', subject: null, opened_at: '2026-11-26T10:00:00.000Z', resolved_at: null },
    rig: null,
    rigs,
    text: `Fleet outage: ${rigs.length} rigs silent since 10:00 UTC`,
  };
}

export interface NotifyRow {
  id: number;
  state: string;
  attempts: number;
  error_code: string | null;
  last_error: string | null;
  payload: string;
}

export function notifyJobs(db: Database): Promise<NotifyRow[]> {
  return db.sequelize.query<NotifyRow>("SELECT id, state, attempts, error_code, last_error, payload FROM jobs WHERE kind = 'notify' ORDER BY id", { type: QueryTypes.SELECT });
}

/** The delivery id and target of a notify job's payload. */
export function payloadOf(row: NotifyRow): { target: string; delivery: string; event: IncidentEvent } {
  return JSON.parse(row.payload) as { target: string; delivery: string; event: IncidentEvent };
}
