import type { Config } from '../../config/schema.ts';
import type { Reader } from '../../db/reader.ts';
import { historyRows } from '../../db/rigs/listing.ts';
import { findRig, rigNotFound } from './lookup.ts';

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

/** A rig's reports received at or after `since`, newest first, at most `limit`. */
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
  const rows = await historyRows(reader, rig.id, q.since, limit + 1);
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
