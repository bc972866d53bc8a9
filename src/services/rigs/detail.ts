import type { Config } from '../../config/schema.ts';
import { rigCaptures, type RigCaptureRow } from '../../db/captures.ts';
import type { UploadState } from '../../db/models/upload.ts';
import type { Reader } from '../../db/reader.ts';
import { fixRows } from '../../db/rigs/listing.ts';
import { rigUploads } from '../../db/uploads.ts';
import { rigAvailability, type Availability } from './availability.ts';
import { rigNotFound, findRig } from './lookup.ts';
import { MIN_INTERVALS, statusMeaning, type RigStatus } from './status.ts';
import { shortAge, timeAgo } from '../time-ago.ts';

/**
 * A moment shown two ways: `at` ISO 8601 UTC ending in Z (scripts, like every time in rigd's JSON),
 * `ago` words (a glance). The gateway's local time for people (absoluteTime) is added where text is
 * rendered (the terminal, the rig page), never in JSON.
 */
export interface TimeView {
  at: string;
  ago: string;
}

/** Consecutive reports from one position, newest run first. */
export interface PositionRun {
  latitude: number;
  longitude: number;
  first_at: string;
  last_at: string;
  reports: number;
}

export interface RigUploadItem {
  id: number;
  key: string;
  state: UploadState;
  size: number;
  bytes_seen: number;
  project: string | null;
  created_at: string;
  completed_at: string | null;
}

/** A capture as the rig's page lists it: the stored row, its times as text. */
export type RigCaptureItem = Omit<RigCaptureRow, 'created_at' | 'updated_at'> & { created_at: string; updated_at: string };

/** One rig's page: what `rigd rigs show`, GET /rigs/{id} and GET /api/v1/rigs/{id} show. */
export interface RigDetail {
  id: string;
  status: RigStatus;
  status_meaning: string;
  serial: string;
  branch: string;
  version: string;
  vpn_address: string;
  /** The VPN address the id is bound to (rigs.address_binding); null: its next report binds it. */
  bound_address: string | null;
  vpn_name: string;
  /** The rig's reported local_ip. */
  lan_ip: string | null;
  latitude: number | null;
  longitude: number | null;
  /** The newest report with a fix (the last report's own when it had one); null: never a fix in the retained history. */
  last_fix: (TimeView & { latitude: number; longitude: number; age: string }) | null;
  current_project: string | null;
  last_report: TimeView;
  first_seen: TimeView;
  /** From the report history, newest first; only reports with a fix. */
  positions: PositionRun[];
  uploads: { total: number; recent: RigUploadItem[] };
  captures: { total: number; recent: RigCaptureItem[] };
  /** Offline periods of the last 7 days and online shares, from the report history. */
  availability: Availability;
  generated_at: string;
}

/** Position runs shown, reports scanned for them, uploads and captures listed. */
export const DETAIL_POSITIONS = 10;
const POSITION_SCAN = 500;
export const DETAIL_ITEMS = 10;

type DetailConfig = Pick<Config, 'rigs' | 'vpn' | 'alerts'>;

const iso = (value: string | Date) => new Date(value).toISOString();
const isoOrNull = (value: string | Date | null) => (value === null ? null : iso(value));

export function timeView(value: Date, now: Date): TimeView {
  return { at: value.toISOString(), ago: timeAgo(value, now) };
}

/** Runs of identical positions (a parked rig reports the same fix for hours). */
export function positionRuns(rows: { received_at: string | Date; latitude: number; longitude: number }[], max: number): PositionRun[] {
  const runs: PositionRun[] = [];
  for (const r of rows) {
    const last = runs[runs.length - 1];
    if (last && last.latitude === r.latitude && last.longitude === r.longitude) {
      last.first_at = iso(r.received_at);
      last.reports += 1;
      continue;
    }
    if (runs.length === max) break;
    runs.push({ latitude: r.latitude, longitude: r.longitude, first_at: iso(r.received_at), last_at: iso(r.received_at), reports: 1 });
  }
  return runs;
}

/**
 * Everything about one rig, on a plain Reader (the CLI runs it without Sequelize). An id that is not a
 * DNS label, or that no rig has, is NotFound "rig X not found".
 */
export async function rigDetail(reader: Reader, config: DetailConfig, rawId: string, now: Date): Promise<RigDetail> {
  const rig = await findRig(reader, config, rawId, now);
  if (!rig) throw rigNotFound(rawId);
  const [positions, uploads, captures, availability] = await Promise.all([
    fixRows(reader, rig.id, { limit: POSITION_SCAN }),
    rigUploads(reader, rig.id, DETAIL_ITEMS),
    rigCaptures(reader, rig.id, DETAIL_ITEMS),
    rigAvailability(reader, config, rig.id, now),
  ]);
  return {
    id: rig.id,
    status: rig.status,
    status_meaning: statusMeaning(rig.status, config, { interval_s: rig.report_interval_s ?? null, intervals: MIN_INTERVALS }),
    serial: rig.serial,
    branch: rig.branch,
    version: rig.version,
    vpn_address: rig.vpn_address,
    bound_address: rig.bound_address ?? null,
    vpn_name: rig.vpn_name,
    lan_ip: rig.lan_ip,
    latitude: rig.latitude,
    longitude: rig.longitude,
    last_fix: positions[0] ? { latitude: Number(positions[0].latitude), longitude: Number(positions[0].longitude), ...timeView(new Date(positions[0].received_at), now), age: shortAge(new Date(positions[0].received_at), now) } : null,
    current_project: rig.current_project,
    last_report: timeView(rig.last_seen_at, now),
    first_seen: timeView(rig.created_at, now),
    positions: positionRuns(positions, DETAIL_POSITIONS),
    uploads: {
      total: uploads.total,
      recent: uploads.recent.map((u) => ({
        id: Number(u.id),
        key: u.key,
        state: u.state,
        size: Number(u.expected_size),
        bytes_seen: Number(u.bytes_seen),
        project: u.project,
        created_at: iso(u.created_at),
        completed_at: isoOrNull(u.completed_at),
      })),
    },
    captures: {
      total: captures.total,
      recent: captures.recent.map((c) => ({
        id: Number(c.id),
        key: c.key,
        state: c.state,
        size: c.size === null ? null : Number(c.size),
        project: c.project,
        error_code: c.error_code,
        created_at: iso(c.created_at),
        updated_at: iso(c.updated_at),
      })),
    },
    availability,
    generated_at: now.toISOString(),
  };
}
