import type { Config } from '../../config/schema.ts';
import type { Reader } from '../../db/reader.ts';
import { compareRigIds, rigStatus, type RigStatus } from './status.ts';
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
}

type RigConfig = Pick<Config, 'rigs' | 'vpn'>;

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

/**
 * Every rig in natural id order (rig2 before rig10) with its status computed now, optionally only
 * one status. Reads only the rigs table. Plain SQL: the CLI runs it without loading Sequelize.
 */
export async function listRigs(reader: Reader, config: RigConfig, now: Date, status?: RigStatus): Promise<RigView[]> {
  const rows = await reader.all<RigRow>(
    'SELECT id, serial, lan_ip, vpn_address, bound_address, version, branch, latitude, longitude, last_seen_at, current_project, created_at FROM rigs',
  );
  const views = rows.map((r) => rigView(r, config, now)).sort((a, b) => compareRigIds(a.id, b.id));
  return status ? views.filter((v) => v.status === status) : views;
}
