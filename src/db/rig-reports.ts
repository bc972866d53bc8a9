import type { Transaction } from 'sequelize';
import type { Database } from './index.ts';

/** One stored report: the rig's new state and its history row. */
export interface ReportRow {
  rig_id: string;
  received_at: Date;
  serial: string;
  lan_ip: string | null;
  peer_address: string;
  version: string;
  branch: string;
  latitude: number | null;
  longitude: number | null;
}

/** Columns a report overwrites on its rig (created_at and current_project stay). */
const UPDATED_ON_REPORT = ['serial', 'lan_ip', 'vpn_address', 'version', 'branch', 'latitude', 'longitude', 'last_seen_at', 'updated_at'] as const;

/**
 * Stores a batch of reports in t with two statements: one multi-row upsert of the rigs (each rig's
 * latest report registers or updates it) and one multi-row insert of the history.
 */
export async function storeRigReports(db: Database, reports: ReportRow[], t: Transaction): Promise<void> {
  const { Rig, RigReport } = db.models;
  const latest = new Map<string, ReportRow>();
  for (const r of reports) latest.set(r.rig_id, r);
  const rigRows = [...latest.values()].map((r) => ({
    id: r.rig_id,
    serial: r.serial,
    lan_ip: r.lan_ip,
    vpn_address: r.peer_address,
    version: r.version,
    branch: r.branch,
    latitude: r.latitude,
    longitude: r.longitude,
    last_seen_at: r.received_at,
    current_project: null,
    created_at: r.received_at,
    updated_at: r.received_at,
  }));
  await db.dialect.upsert(Rig, rigRows, ['id'], UPDATED_ON_REPORT, t);
  await db.dialect.bulkInsert(RigReport, reports.map((r) => ({ ...r })), t);
}
