import type { Config } from '../../config/schema.ts';
import type { Reader } from '../../db/reader.ts';
import { findRig, rigNotFound } from './lookup.ts';
import type { RigReportView } from './view.ts';

/**
 * One report of the history under the interface's field names (the names a rig sends), the same in
 * JSON and CSV, from the API and `rigd rigs history` alike (docs/http-api.md#renamed-fields).
 */
export interface HistoryEntry {
  /** ISO 8601 UTC (`...Z`). */
  received_at: string;
  rig_serial: string;
  gpsd_latitude: number | null;
  gpsd_longitude: number | null;
  local_ip: string | null;
  software_version: string;
  git_branch: string;
  /** The VPN address the report came from. */
  peer_address: string;
}

export interface RigHistory {
  rig: string;
  since: string;
  entries: HistoryEntry[];
  /** More reports than `limit` were in the window: the oldest were left out. */
  truncated: boolean;
}

/** Largest history one call returns (newest first). */
export const HISTORY_LIMIT = 100_000;

/** A history row as the reader returns it (SQLite gives the time as text). */
type ReportRow = Omit<RigReportView, 'received_at'> & { received_at: string | Date };

/** How Sequelize writes DATE columns ("2026-11-23 07:37:30.123 +00:00"), so a text comparison in SQLite is a time comparison. */
export function sqlTime(d: Date): string {
  return `${d.toISOString().replace('T', ' ').replace('Z', '')} +00:00`;
}

/** A rig's reports received at or after `since`, newest first, at most `limit`. Plain SQL. */
export async function rigHistory(
  reader: Reader,
  config: Pick<Config, 'rigs' | 'vpn' | 'alerts'>,
  rawId: string,
  q: { since: Date; limit?: number },
  now: Date,
): Promise<RigHistory> {
  const rig = await findRig(reader, config, rawId, now);
  if (!rig) throw rigNotFound(rawId);
  const limit = Math.min(Math.max(q.limit ?? HISTORY_LIMIT, 1), HISTORY_LIMIT);
  const rows = await reader.all<ReportRow>(
    'SELECT received_at, serial, lan_ip, peer_address, version, branch, latitude, longitude FROM rig_reports WHERE rig_id = ? AND received_at >= ? ORDER BY received_at DESC, id DESC LIMIT ?',
    [rig.id, sqlTime(q.since), limit + 1],
  );
  return {
    rig: rig.id,
    since: q.since.toISOString(),
    truncated: rows.length > limit,
    entries: rows.slice(0, limit).map((r) => ({
      received_at: new Date(r.received_at).toISOString(),
      rig_serial: r.serial,
      gpsd_latitude: r.latitude,
      gpsd_longitude: r.longitude,
      local_ip: r.lan_ip,
      software_version: r.version,
      git_branch: r.branch,
      peer_address: r.peer_address,
    })),
  };
}
