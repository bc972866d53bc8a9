/**
 * The rig report path's statements, all of them: the bindings a batch of reports is judged against
 * (rigs.bound_address: which VPN address each rig id is bound to; rigs.registered_from: how many ids
 * each address registered lately), the batch stored (one upsert of the rigs, one insert of the
 * history), and the history's retention. Services hand it typed rows; no SQL text leaves this file.
 */
import { Op, QueryTypes, type Transaction, type WhereOptions } from 'sequelize';
import { dbNow } from './clock.ts';
import { sqlTime } from './stored-time.ts';
import type { OnConflict, RawValue } from './dialect/contract.ts';
import type { Database } from './index.ts';
import type { RigReport } from './models/index.ts';
import { forEngine } from './dialect/engine.ts';

/** A rig's binding as a report is judged against it. */
export interface BindingRow {
  id: string;
  bound_address: string | null;
  last_seen_at: Date;
}

/** Ids registered by one address since a time, and the oldest of them. */
export interface Registrations {
  count: number;
  oldest: Date | null;
}

function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(',');
}

async function select<T extends object>(db: Database, sql: string, params: unknown[], t?: Transaction): Promise<T[]> {
  return db.sequelize.query<T>(sql, { replacements: params, type: QueryTypes.SELECT, ...(t ? { transaction: t } : {}) });
}

/**
 * PostgreSQL: a write transaction's now(), as a statement of it read it in passing (readBindings).
 * now() is the transaction's start, the same for each of its statements: the batch stored in t takes
 * it from here instead of asking in a statement of its own (batchNow).
 */
const nowOf = new WeakMap<Transaction, Date>();

/**
 * The bindings of these rig ids (absent ids: not registered). In t on PostgreSQL the rows are locked
 * until t ends, so batches committing at once judge one rig in turn; each row also brings t's now().
 */
export async function readBindings(db: Database, ids: string[], t?: Transaction): Promise<Map<string, BindingRow>> {
  const out = new Map<string, BindingRow>();
  if (ids.length === 0) return out;
  const [columns, lock] = t ? forEngine(db.dialect.name, { postgres: [', now() AS now', ' ORDER BY id FOR UPDATE'], sqlite: ['', ''] }) : ['', ''];
  const rows = await select<{ id: string; bound_address: string | null; last_seen_at: string | Date; now?: Date }>(
    db,
    `SELECT id, bound_address, last_seen_at${columns} FROM rigs WHERE id IN (${placeholders(ids.length)})${lock}`,
    ids,
    t,
  );
  for (const r of rows) out.set(r.id, { id: r.id, bound_address: r.bound_address, last_seen_at: new Date(r.last_seen_at) });
  const now = rows[0]?.now;
  if (t && now !== undefined) nowOf.set(t, new Date(now));
  return out;
}

/** Per address: the rig ids it registered at or after `since`. */
export async function readRegistrations(db: Database, addresses: string[], since: Date, t?: Transaction): Promise<Map<string, Registrations>> {
  const out = new Map<string, Registrations>();
  if (addresses.length === 0) return out;
  const rows = await select<{ registered_from: string; n: number | string; oldest: string | Date | null }>(
    db,
    `SELECT registered_from, COUNT(*) AS n, MIN(created_at) AS oldest FROM rigs
      WHERE registered_from IN (${placeholders(addresses.length)}) AND created_at >= ? GROUP BY registered_from`,
    [...addresses, since],
    t,
  );
  for (const r of rows) out.set(r.registered_from, { count: Number(r.n), oldest: r.oldest === null ? null : new Date(r.oldest) });
  return out;
}

/** Binds each rig id to its address in t. */
export async function writeBindings(db: Database, bindings: { id: string; address: string }[], t: Transaction): Promise<void> {
  for (const b of bindings) {
    await db.sequelize.query('UPDATE rigs SET bound_address = ? WHERE id = ?', { replacements: [b.address, b.id], transaction: t });
  }
}

/** Binds rig `id` to `address` (null: unbound, the next report binds it). False when there is no such rig. */
export async function setBinding(db: Database, id: string, address: string | null): Promise<boolean> {
  return db.writes.run(async (t) => {
    const [n] = await db.models.Rig.update({ bound_address: address }, { where: { id }, transaction: t });
    return n === 1;
  });
}

/** The rig bound to `address` that reported last, or null. */
export async function rigBoundTo(db: Database, address: string): Promise<string | null> {
  const rows = await select<{ id: string }>(db, 'SELECT id FROM rigs WHERE bound_address = ? ORDER BY last_seen_at DESC LIMIT 1', [address]);
  return rows[0]?.id ?? null;
}

/** The fields a report stores on its history row, as a rig sent them. */
export interface ReportFields {
  serial: string;
  lan_ip: string | null;
  peer_address: string;
  version: string;
  branch: string;
  latitude: number | null;
  longitude: number | null;
}

/** One stored report: the rig's new state and its history row. */
export interface ReportRow extends ReportFields {
  rig_id: string;
  /** null: now, by the database's clock (PostgreSQL's now(); on SQLite, a file of this host, this host's). */
  received_at: Date | null;
}

/**
 * The time "now" (null) stands for in a batch: the database's clock (PostgreSQL: t's now(), read
 * with the batch's bindings when it read any, else asked), or this host's on SQLite.
 */
async function batchNow(db: Database, reports: ReportRow[], t: Transaction): Promise<Date> {
  if (forEngine(db.dialect.name, { postgres: true, sqlite: false }) && reports.some((r) => r.received_at === null)) return nowOf.get(t) ?? dbNow(db.sequelize, t);
  return new Date();
}

/** Columns a report overwrites on its rig (created_at and current_project stay). */
const UPDATED_ON_REPORT = ['serial', 'lan_ip', 'vpn_address', 'version', 'branch', 'latitude', 'longitude', 'last_seen_at', 'updated_at'] as const;

/** How far past a batch's newest report a rig's stored last report counts as lying in the future. */
export const FUTURE_SLACK_MS = 60_000;

/**
 * The rig upsert of a batch: a rig moves to its new report unless it has a later one, except when
 * that "later" one lies in the future (stored by a clock that was ahead, since set right): a last
 * report in the future is not kept, so a rig never stays frozen at it. The future starts past the
 * batch's newest report and past this host's now, whichever is later: a batch that merely commits
 * late (its reports older than the stored one, both in the past) never moves a rig back. That time
 * is a bound value: the statement's text is the same for every batch.
 */
function rigUpsert(newest: number): OnConflict {
  return {
    conflict: ['id'],
    update: UPDATED_ON_REPORT,
    where: (param) => `("rigs"."last_seen_at" <= excluded."last_seen_at" OR "rigs"."last_seen_at" > ${param(0)})`,
    whereValues: [new Date(Math.max(Date.now(), newest) + FUTURE_SLACK_MS)],
  };
}

/** bound_address and registered_from: set when a report registers the rig, never by a later report. */
const RIG_COLUMNS = ['id', 'serial', 'lan_ip', 'vpn_address', 'version', 'branch', 'latitude', 'longitude', 'last_seen_at', 'current_project', 'created_at', 'updated_at', 'bound_address', 'registered_from'] as const;
const REPORT_COLUMNS = ['rig_id', 'received_at', 'serial', 'lan_ip', 'peer_address', 'version', 'branch', 'latitude', 'longitude'] as const;

const byRigId = (a: ReportRow, b: ReportRow) => (a.rig_id < b.rig_id ? -1 : a.rig_id > b.rig_id ? 1 : 0);

/**
 * Stores a batch of reports in t: one multi-row upsert of the rigs (each rig's latest report
 * registers or updates it, unless the rig has a later one) and one multi-row insert of the history,
 * both with bound parameters (dialect.insertRowsPair: no query generator on this hot path; one
 * statement on PostgreSQL, two on SQLite).
 * A report received "now" (null) is received at the batch's now: on PostgreSQL the database's (its
 * transaction's now()), one clock for every node, whatever each node's own clock says.
 */
export async function storeRigReports(db: Database, reports: ReportRow[], t: Transaction): Promise<void> {
  const { Rig, RigReport } = db.models;
  const now = await batchNow(db, reports, t);
  // Each rig's latest report (its new state) and every history row, in one pass.
  const latest = new Map<string, ReportRow>();
  const historyRows: RawValue[][] = new Array(reports.length);
  let newest = -Infinity;
  for (let i = 0; i < reports.length; i++) {
    const r = reports[i]!;
    const at = r.received_at ?? now;
    if (at.getTime() > newest) newest = at.getTime();
    latest.set(r.rig_id, r);
    historyRows[i] = [r.rig_id, at, r.serial, r.lan_ip, r.peer_address, r.version, r.branch, r.latitude, r.longitude];
  }
  // In id order: batches committing at once (PostgreSQL) lock the rigs they update in one order,
  // so they wait for each other and never deadlock.
  const rigRows: RawValue[][] = [];
  for (const r of [...latest.values()].sort(byRigId)) {
    const at = r.received_at ?? now;
    rigRows.push([r.rig_id, r.serial, r.lan_ip, r.peer_address, r.version, r.branch, r.latitude, r.longitude, at, null, at, at, r.peer_address, r.peer_address]);
  }
  // The rigs first (the history references them): PostgreSQL in one statement, SQLite in two issued together.
  await db.dialect.insertRowsPair({ model: Rig, columns: RIG_COLUMNS, rows: rigRows, onConflict: rigUpsert(newest) }, { model: RigReport, columns: REPORT_COLUMNS, rows: historyRows }, t);
}

/**
 * Deletes, in one write transaction of its own, at most `limit` of the oldest reports received
 * before `before`, in one statement: the oldest rows by the received_at index, deleted by id. No id
 * list goes through JavaScript, and the writer is held for one short statement and its COMMIT.
 * Returns the rows deleted.
 */
export function deleteReportsBefore(db: Database, before: Date, limit: number): Promise<number> {
  const table = db.models.RigReport.getTableName() as string;
  const sql = `DELETE FROM "${table}" WHERE id IN (SELECT id FROM "${table}" WHERE received_at < ? ORDER BY received_at LIMIT ?)`;
  // BULKDELETE: the driver answers with the number of rows deleted.
  return db.writes.run(async (t) => (await db.sequelize.query(sql, { replacements: [sqlTime(before), limit], transaction: t, type: QueryTypes.BULKDELETE })) as number);
}

/** The newest report's time as stored (null with no report): retention measures its window from it. */
export async function newestReportAt(db: Database): Promise<Date | null> {
  const table = db.models.RigReport.getTableName() as string;
  const [row] = await db.sequelize.query<{ newest: string | Date | null }>(`SELECT max(received_at) AS newest FROM "${table}"`, { type: QueryTypes.SELECT });
  const v = row?.newest ?? null;
  if (v === null) return null;
  return v instanceof Date ? v : new Date(String(v).replace(' ', 'T').replace(' ', ''));
}

/** Now by the clock report times are stored by (PostgreSQL: the server's; SQLite: this host's). */
export function reportClockNow(db: Database): Promise<Date> {
  return dbNow(db.sequelize);
}

/** A rig's stored reports, newest first, received within [since, until), at most `limit`. */
export async function reportsOf(db: Database, rigId: string, q: { since?: Date; until?: Date; limit: number }): Promise<RigReport[]> {
  const window: Record<symbol, Date> = {};
  if (q.since) window[Op.gte] = q.since;
  if (q.until) window[Op.lt] = q.until;
  const where: WhereOptions<RigReport> = { rig_id: rigId, ...(q.since || q.until ? { received_at: window } : {}) };
  return (await db.models.RigReport.findAll({
    where,
    order: [
      ['received_at', 'DESC'],
      ['id', 'DESC'],
    ],
    limit: q.limit,
    raw: true,
  })) as RigReport[];
}

/** Sets a rig's current project in t (an upload named it). */
export async function setCurrentProject(db: Database, rigId: string, project: string, t: Transaction): Promise<void> {
  await db.models.Rig.update({ current_project: project }, { where: { id: rigId }, transaction: t });
}

/** A rig's current project (null: none, or no such rig). */
export async function currentProjectOf(db: Database, rigId: string): Promise<string | null> {
  return (await db.models.Rig.findByPk(rigId))?.current_project ?? null;
}
