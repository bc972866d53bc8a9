import type { Config } from '../../config/schema.ts';
import type { Reader } from '../../db/reader.ts';
import { fixRows, mapRows } from '../../db/rigs/listing.ts';
import { rhythmOf } from './view.ts';
import { rigStatus, type RigStatus } from './status.ts';

/**
 * One marker of the fleet map, in few fields (the map reloads them every minute): a rig with a fix
 * in its last report, or, when that report had none, at its last known fix (`last_fix`: its time).
 */
export interface MapRig {
  id: string;
  lat: number;
  lon: number;
  status: RigStatus;
  /** ISO 8601 (UTC). */
  last_report: string;
  branch: string;
  version: string;
  /** ISO 8601 (UTC), only when the last report had no fix: when the rig was at lat, lon. */
  last_fix?: string;
}

/** Hours of report history the track on a rig's page covers, and the most points it draws. */
export const TRACK_HOURS = 24;
export const TRACK_MAX_POINTS = 5000;

/** Degrees to 6 decimals (about 0.1 m): what a GPS fix carries, in a third of the bytes of a double's text. */
const degrees = (value: number) => Math.round(Number(value) * 1e6) / 1e6;

/**
 * Every rig with a position, with its status now: where its last report put it, or, for a rig whose
 * last report had no fix, its last known fix from the report history (marked with `last_fix`).
 */
export async function mapRigs(reader: Reader, config: Pick<Config, 'rigs' | 'alerts'>, now: Date): Promise<MapRig[]> {
  const { current, lastKnown } = await mapRows(reader);
  const rows = [...current, ...lastKnown].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return rows.map((r) => {
    const last = new Date(r.last_seen_at);
    return {
      id: r.id,
      lat: degrees(r.latitude),
      lon: degrees(r.longitude),
      status: rigStatus(last, now, config, rhythmOf(r)),
      last_report: last.toISOString(),
      branch: r.branch,
      version: r.version,
      ...(r.fix_at === undefined ? {} : { last_fix: new Date(r.fix_at).toISOString() }),
    };
  });
}

/**
 * A rig's positions over the last TRACK_HOURS, oldest first, as [lat, lon] pairs; repeats of the
 * same fix in a row are kept once (a parked rig). The newest TRACK_MAX_POINTS reports at most.
 */
export async function rigTrack(reader: Reader, rigId: string, now: Date): Promise<[number, number][]> {
  const since = new Date(now.getTime() - TRACK_HOURS * 3600_000);
  const rows = await fixRows(reader, rigId, { since, limit: TRACK_MAX_POINTS });
  const track: [number, number][] = [];
  for (const r of rows.reverse()) {
    const last = track[track.length - 1];
    const point: [number, number] = [Number(r.latitude), Number(r.longitude)];
    if (!last || last[0] !== point[0] || last[1] !== point[1]) track.push(point);
  }
  return track;
}
