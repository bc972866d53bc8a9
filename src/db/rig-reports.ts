import { QueryTypes, type Transaction } from 'sequelize';
import { dbNow } from './clock.ts';
import type { RawValue } from './dialect/contract.ts';
import type { Database } from './index.ts';

/** One stored report: the rig's new state and its history row. */
export interface ReportRow {
  rig_id: string;
  /** null: now, by the database's clock (PostgreSQL's now(); on SQLite, a file of this host, this host's). */
  received_at: Date | null;
  serial: string;
  lan_ip: string | null;
  peer_address: string;
  version: string;
  branch: string;
  latitude: number | null;
  longitude: number | null;
}

/** A report row with its time settled. */
type TimedRow = ReportRow & { received_at: Date };

/** Settles "now" (null) times: the database's clock (PostgreSQL: t's now()), or this host's on SQLite. */
async function timed(db: Database, reports: ReportRow[], t?: Transaction): Promise<TimedRow[]> {
  if (reports.every((r) => r.received_at !== null)) return reports as TimedRow[];
  const now = db.dialect.name === 'postgres' && t ? await dbNow(db.sequelize, t) : new Date();
  return reports.map((r) => ({ ...r, received_at: r.received_at ?? now }));
}

/** Columns a report overwrites on its rig (created_at and current_project stay). */
const UPDATED_ON_REPORT = ['serial', 'lan_ip', 'vpn_address', 'version', 'branch', 'latitude', 'longitude', 'last_seen_at', 'updated_at'] as const;

/** A report older than the rig's last one (a batch that committed late) never moves the rig back. */
const NOT_OLDER = '"rigs"."last_seen_at" <= excluded."last_seen_at"';

/** How far past a batch's newest report a rig's stored last report counts as lying in the future. */
export const FUTURE_SLACK_MS = 60_000;

/** A time as SQL text: the stored DATE format on SQLite (text comparison is time order), timestamptz on PostgreSQL. */
function timeLiteral(db: Database, d: Date): string {
  const iso = d.toISOString();
  return db.dialect.name === 'postgres' ? `'${iso}'::timestamptz` : `'${iso.replace('T', ' ').replace('Z', '')} +00:00'`;
}

/**
 * The rig upsert of a batch: a rig moves to its new report unless it has a later one, except when
 * that "later" one lies in the future (stored by a clock that was ahead, since set right): a last
 * report in the future is not kept, so a rig never stays frozen at it. The future starts past the
 * batch's newest report and past this host's now, whichever is later: a batch that merely commits
 * late (its reports older than the stored one, both in the past) never moves a rig back.
 */
function rigUpsert(db: Database, reports: TimedRow[]) {
  const newest = Math.max(Date.now(), ...reports.map((r) => r.received_at.getTime()));
  const future = timeLiteral(db, new Date(newest + FUTURE_SLACK_MS));
  return { conflict: ['id'], update: UPDATED_ON_REPORT, where: `(${NOT_OLDER} OR "rigs"."last_seen_at" > ${future})` } as const;
}

/** bound_address and registered_from: set when a report registers the rig, never by a later report. */
const RIG_COLUMNS = ['id', 'serial', 'lan_ip', 'vpn_address', 'version', 'branch', 'latitude', 'longitude', 'last_seen_at', 'current_project', 'created_at', 'updated_at', 'bound_address', 'registered_from'] as const;
const REPORT_COLUMNS = ['rig_id', 'received_at', 'serial', 'lan_ip', 'peer_address', 'version', 'branch', 'latitude', 'longitude'] as const;

/** The rows of a batch: each rig's latest report (its new state), in id order, and every history row. */
function batchRows(reports: TimedRow[]): { rigRows: RawValue[][]; historyRows: RawValue[][] } {
  const latest = new Map<string, TimedRow>();
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

/**
 * Stores a batch of reports in t with two statements: one multi-row upsert of the rigs (each rig's
 * latest report registers or updates it, unless the rig has a later one) and one multi-row insert of
 * the history, both with bound parameters (dialect.insertRows: no query generator on this hot path).
 * On PostgreSQL every report of the batch is received at the database's now().
 */
export async function storeRigReports(db: Database, reports: ReportRow[], t: Transaction): Promise<void> {
  const { Rig, RigReport } = db.models;
  // PostgreSQL: the time a report was received is the database's (its transaction's now()), one
  // clock for every node, whatever each node's own clock says.
  const rows = await timed(db, reports, t);
  const { rigRows, historyRows } = batchRows(rows);
  // Issued together: the dialect runs them in this order in t (the history references the rig).
  await Promise.all([db.dialect.insertRows(Rig, RIG_COLUMNS, rigRows, t, rigUpsert(db, rows)), db.dialect.insertRows(RigReport, REPORT_COLUMNS, historyRows, t)]);
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
  // SQLite only (the write path takes scripts there): "now" is this host's clock.
  const rows = reports.map((r) => ({ ...r, received_at: r.received_at ?? new Date() }));
  const { rigRows, historyRows } = batchRows(rows);
  const rigs = script(Rig, RIG_COLUMNS, rigRows, rigUpsert(db, rows));
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

/** The newest report's time as stored (null with no report): retention measures its window from it. */
export async function newestReportAt(db: Database): Promise<Date | null> {
  const table = db.models.RigReport.getTableName() as string;
  const [row] = await db.sequelize.query<{ newest: string | Date | null }>(`SELECT max(received_at) AS newest FROM "${table}"`, { type: QueryTypes.SELECT });
  const v = row?.newest ?? null;
  if (v === null) return null;
  return v instanceof Date ? v : new Date(String(v).replace(' ', 'T').replace(' ', ''));
}
