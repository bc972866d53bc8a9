import { QueryTypes, type Transaction } from 'sequelize';
import type { RawValue } from './dialect/contract.ts';
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

/** A report older than the rig's last one (a batch that committed late) never moves the rig back. */
const NOT_OLDER = '"rigs"."last_seen_at" <= excluded."last_seen_at"';

/** bound_address and registered_from: set when a report registers the rig, never by a later report. */
const RIG_COLUMNS = ['id', 'serial', 'lan_ip', 'vpn_address', 'version', 'branch', 'latitude', 'longitude', 'last_seen_at', 'current_project', 'created_at', 'updated_at', 'bound_address', 'registered_from'] as const;
const REPORT_COLUMNS = ['rig_id', 'received_at', 'serial', 'lan_ip', 'peer_address', 'version', 'branch', 'latitude', 'longitude'] as const;

/** The rows of a batch: each rig's latest report (its new state), in id order, and every history row. */
function batchRows(reports: ReportRow[]): { rigRows: RawValue[][]; historyRows: RawValue[][] } {
  const latest = new Map<string, ReportRow>();
  for (const r of reports) latest.set(r.rig_id, r);
  const rigRows: RawValue[][] = [];
  // In id order: batches committing at once (PostgreSQL) lock the rigs they update in one order,
  // so they wait for each other and never deadlock.
  for (const r of [...latest.values()].sort((a, b) => (a.rig_id < b.rig_id ? -1 : a.rig_id > b.rig_id ? 1 : 0))) {
    rigRows.push([r.rig_id, r.serial, r.lan_ip, r.peer_address, r.version, r.branch, r.latitude, r.longitude, r.received_at, null, r.received_at, r.received_at, r.peer_address, r.peer_address]);
  }
  const historyRows = reports.map((r) => [r.rig_id, r.received_at, r.serial, r.lan_ip, r.peer_address, r.version, r.branch, r.latitude, r.longitude]);
  return { rigRows, historyRows };
}

const RIG_UPSERT = { conflict: ['id'], update: UPDATED_ON_REPORT, where: NOT_OLDER } as const;

/**
 * Stores a batch of reports in t with two statements: one multi-row upsert of the rigs (each rig's
 * latest report registers or updates it, unless the rig has a later one) and one multi-row insert of
 * the history, both with bound parameters (dialect.insertRows: no query generator on this hot path).
 */
export async function storeRigReports(db: Database, reports: ReportRow[], t: Transaction): Promise<void> {
  const { Rig, RigReport } = db.models;
  const { rigRows, historyRows } = batchRows(reports);
  // Issued together: the dialect runs them in this order in t (the history references the rig).
  await Promise.all([db.dialect.insertRows(Rig, RIG_COLUMNS, rigRows, t, RIG_UPSERT), db.dialect.insertRows(RigReport, REPORT_COLUMNS, historyRows, t)]);
}

/**
 * The same two statements as one SQL script in a write transaction of their own, where the write
 * path takes scripts (SQLite: one trip through the driver for both, one for COMMIT); null when it
 * does not or a value cannot be written into SQL text, and the batch goes through storeRigReports.
 */
export function storeRigReportsAsScript(db: Database, reports: ReportRow[], onStart?: () => void): Promise<void> | null {
  const script = db.dialect.insertRowsScript;
  if (!script || !db.writes.canRunScript) return null;
  const { Rig, RigReport } = db.models;
  const { rigRows, historyRows } = batchRows(reports);
  const rigs = script(Rig, RIG_COLUMNS, rigRows, RIG_UPSERT);
  const history = rigs === null ? null : script(RigReport, REPORT_COLUMNS, historyRows);
  if (rigs === null || history === null) return null;
  return db.writes.runScript(`${rigs};${history}`, onStart);
}

/**
 * Deletes in t at most `limit` of the oldest reports received before `before` (stored time text), in
 * one statement: the oldest rows by the received_at index, deleted by id. No id list goes through
 * JavaScript, and the writer is held for one short statement and its COMMIT. Returns the rows deleted.
 */
export async function deleteReportsBefore(db: Database, before: string, limit: number, t: Transaction): Promise<number> {
  const table = db.models.RigReport.getTableName() as string;
  const sql = `DELETE FROM "${table}" WHERE id IN (SELECT id FROM "${table}" WHERE received_at < ? ORDER BY received_at LIMIT ?)`;
  // BULKDELETE: the driver answers with the number of rows deleted.
  return (await db.sequelize.query(sql, { replacements: [before, limit], transaction: t, type: QueryTypes.BULKDELETE })) as number;
}
