import type { Config } from '../../config/schema.ts';
import type { Reader } from '../../db/reader.ts';
import { MIN_INTERVALS, compareRigIds, rigStatus, type Rhythm, type RigStatus } from './status.ts';
import type { RigView } from './service.ts';

/** A rigs row as the database returns it (dates may come back as text). */
export interface RigRow {
  id: string;
  serial: string;
  lan_ip: string | null;
  vpn_address: string;
  bound_address?: string | null;
  version: string;
  branch: string;
  latitude: number | null;
  longitude: number | null;
  last_seen_at: string | Date;
  current_project: string | null;
  created_at: string | Date;
  /** The rig's rhythm (null: not learned yet). */
  report_interval_s?: number | null;
  report_intervals?: number | null;
}

type RigConfig = Pick<Config, 'rigs' | 'vpn' | 'alerts'>;

/** A rigs row's rhythm, as status.ts reads it. */
export function rhythmOf(rig: { report_interval_s?: number | null; report_intervals?: number | null }): Rhythm {
  const intervals = rig.report_intervals == null ? 0 : Number(rig.report_intervals);
  // Learned from too few intervals: not a rhythm yet (the fixed thresholds apply).
  const interval = rig.report_interval_s == null || intervals < MIN_INTERVALS ? null : Number(rig.report_interval_s);
  return { interval_s: interval, intervals };
}

export function rigView(rig: RigRow, config: RigConfig, now: Date): RigView {
  const lastSeen = new Date(rig.last_seen_at);
  return {
    id: rig.id,
    status: rigStatus(lastSeen, now, config, rhythmOf(rig)),
    report_interval_s: rhythmOf(rig).interval_s,
    last_seen_at: lastSeen,
    serial: rig.serial,
    lan_ip: rig.lan_ip,
    vpn_address: rig.vpn_address,
    bound_address: rig.bound_address ?? null,
    vpn_name: `${rig.id}.${config.vpn.rig_domain}`,
    version: rig.version,
    branch: rig.branch,
    latitude: rig.latitude,
    longitude: rig.longitude,
    current_project: rig.current_project ?? null,
    created_at: new Date(rig.created_at),
  };
}

/**
 * Every rig in natural id order (rig2 before rig10) with its status computed now, optionally only
 * one status. Reads only the rigs table. Plain SQL: the CLI runs it without loading Sequelize.
 */
export async function listRigs(reader: Reader, config: RigConfig, now: Date, status?: RigStatus): Promise<RigView[]> {
  const rows = await reader.all<RigRow>(
    'SELECT id, serial, lan_ip, vpn_address, bound_address, version, branch, latitude, longitude, last_seen_at, current_project, created_at, report_interval_s, report_intervals FROM rigs',
  );
  const views = rows.map((r) => rigView(r, config, now)).sort((a, b) => compareRigIds(a.id, b.id));
  return status ? views.filter((v) => v.status === status) : views;
}
