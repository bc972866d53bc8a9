import type { Config } from '../../config/schema.ts';
import type { ReportRow } from '../../db/rigs.ts';
import { rigStatus, type RigStatus } from './status.ts';

/** A rig as tools and pages see it. */
export interface RigView {
  id: string;
  status: RigStatus;
  last_seen_at: Date;
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
}

export type RigConfig = Pick<Config, 'rigs' | 'vpn'>;

/** The view of one rigs row, its status computed at `now`. */
export function rigView(rig: RigRow, config: RigConfig, now: Date): RigView {
  const lastSeen = new Date(rig.last_seen_at);
  return {
    id: rig.id,
    status: rigStatus(lastSeen, now, config.rigs),
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
