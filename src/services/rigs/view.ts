import type { Config } from '../../config/schema.ts';
import type { ReportRow } from '../../db/rigs.ts';
import type { RigRow } from '../../db/rigs/listing.ts';
import { MIN_INTERVALS, rigStatus, type Rhythm, type RigStatus } from './status.ts';

/** A rig as tools and pages see it. */
export interface RigView {
  id: string;
  status: RigStatus;
  last_seen_at: Date;
  /** The rig's rhythm: the median of its last intervals between reports, in seconds (null: not learned yet). */
  report_interval_s?: number | null;
  serial: string;
  lan_ip: string | null;
  vpn_address: string;
  /** The VPN address the id is bound to (rigs.address_binding); null: unbound, the next report binds it. */
  bound_address?: string | null;
  /** <id>.<vpn.rig_domain> */
  vpn_name: string;
  version: string;
  branch: string;
  latitude: number | null;
  longitude: number | null;
  current_project: string | null;
  created_at: Date;
}

/** One history row (device location record): a stored report without its rig id. */
export type RigReportView = Omit<ReportRow, 'rig_id' | 'received_at'> & { received_at: Date };

export type { RigRow };

export type RigConfig = Pick<Config, 'rigs' | 'vpn' | 'alerts'>;

/** A rigs row's rhythm, as status.ts reads it. */
export function rhythmOf(rig: { report_interval_s?: number | null; report_intervals?: number | null }): Rhythm {
  const intervals = rig.report_intervals == null ? 0 : Number(rig.report_intervals);
  // Learned from too few intervals: not a rhythm yet (the fixed thresholds apply).
  const interval = rig.report_interval_s == null || intervals < MIN_INTERVALS ? null : Number(rig.report_interval_s);
  return { interval_s: interval, intervals };
}

/** The view of one rigs row, its status computed at `now`. */
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
