import type { Reader } from '../../db/reader.ts';
import { compareRigIds, type RigStatus } from './status.ts';
import { rigView, type RigConfig, type RigRow, type RigView } from './view.ts';

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
