import { QueryTypes, type Transaction } from 'sequelize';
import type { Database } from './index.ts';
import type { Reader } from './reader.ts';

/**
 * The incidents table. Every transition is one conditional statement: an incident opens by an
 * insert that does nothing while one with the same open_key is open, repeats and resolves by an
 * update that matches only the state it was read in. The caller learns whether its statement made
 * the transition (another node may have made it first).
 */

export interface IncidentRow {
  id: number;
  kind: string;
  subject: string | null;
  opened_at: Date;
  last_notified_at: Date;
  resolved_at: Date | null;
  acked_at: Date | null;
  acked_by: string | null;
  details: Record<string, unknown>;
  count: number;
}

type Stored = Omit<IncidentRow, 'opened_at' | 'last_notified_at' | 'resolved_at' | 'acked_at' | 'details'> & {
  opened_at: string | Date;
  last_notified_at: string | Date;
  resolved_at: string | Date | null;
  acked_at: string | Date | null;
  details: string;
};

const COLUMNS = 'id, kind, subject, opened_at, last_notified_at, resolved_at, acked_at, acked_by, details, count';

/** A time as stored: the DATE text Sequelize writes on SQLite (text order is time order); PostgreSQL parses it. */
export function storedTime(d: Date): string {
  return `${d.toISOString().replace('T', ' ').replace('Z', '')} +00:00`;
}

const date = (v: string | Date | null): Date | null => (v === null ? null : new Date(v));

function parseDetails(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function incidentRow(r: Stored): IncidentRow {
  return {
    id: Number(r.id),
    kind: r.kind,
    subject: r.subject,
    opened_at: new Date(r.opened_at),
    last_notified_at: new Date(r.last_notified_at),
    resolved_at: date(r.resolved_at),
    acked_at: date(r.acked_at),
    acked_by: r.acked_by,
    details: parseDetails(r.details),
    count: Number(r.count),
  };
}

export const openKey = (kind: string, subject: string | null) => `${kind}:${subject ?? ''}`;

/** Every open incident, oldest first. */
export async function openIncidents(reader: Reader): Promise<IncidentRow[]> {
  const rows = await reader.all<Stored>(`SELECT ${COLUMNS} FROM incidents WHERE resolved_at IS NULL ORDER BY id`);
  return rows.map(incidentRow);
}

/** Open incidents, then those resolved at or after `since`, newest first, at most limit of those. */
export async function recentIncidents(reader: Reader, since: Date, limit: number): Promise<IncidentRow[]> {
  const [open, resolved] = await Promise.all([
    reader.all<Stored>(`SELECT ${COLUMNS} FROM incidents WHERE resolved_at IS NULL ORDER BY id DESC`),
    reader.all<Stored>(`SELECT ${COLUMNS} FROM incidents WHERE resolved_at >= ? ORDER BY resolved_at DESC, id DESC LIMIT ?`, [storedTime(since), limit]),
  ]);
  return [...open, ...resolved].map(incidentRow);
}

/** The latest incident of kind about subject (open or not), or null. */
export async function latestIncident(db: Database, kind: string, subject: string, t?: Transaction): Promise<IncidentRow | null> {
  const rows = await db.sequelize.query<Stored>(`SELECT ${COLUMNS} FROM incidents WHERE kind = ? AND subject = ? ORDER BY id DESC LIMIT 1`, {
    replacements: [kind, subject],
    type: QueryTypes.SELECT,
    transaction: t,
  });
  return rows[0] ? incidentRow(rows[0]) : null;
}

export async function incidentById(db: Database, id: number, t?: Transaction): Promise<IncidentRow | null> {
  const rows = await db.sequelize.query<Stored>(`SELECT ${COLUMNS} FROM incidents WHERE id = ?`, { replacements: [id], type: QueryTypes.SELECT, transaction: t });
  return rows[0] ? incidentRow(rows[0]) : null;
}

/** Opens an incident unless one of the same kind and subject is open: its id, or null. */
export async function insertIncident(
  db: Database,
  inc: { kind: string; subject: string | null; at: Date; details: Record<string, unknown> },
  t: Transaction,
): Promise<number | null> {
  const key = openKey(inc.kind, inc.subject);
  // Another node inserting the same key at once: PostgreSQL makes this wait for it, then do nothing.
  const inserted = await changesOne(
    db,
    `INSERT INTO incidents (kind, subject, open_key, opened_at, last_notified_at, details, count) VALUES (?, ?, ?, ?, ?, ?, 1) ON CONFLICT (open_key) DO NOTHING`,
    [inc.kind, inc.subject, key, storedTime(inc.at), storedTime(inc.at), JSON.stringify(inc.details)],
    t,
  );
  if (!inserted) return null;
  const rows = await db.sequelize.query<{ id: number }>('SELECT id FROM incidents WHERE open_key = ?', { replacements: [key], type: QueryTypes.SELECT, transaction: t });
  return rows[0] ? Number(rows[0].id) : null;
}

/** Runs an INSERT or UPDATE and says whether it changed exactly one row. */
async function changesOne(db: Database, sql: string, replacements: unknown[], t?: Transaction): Promise<boolean> {
  // BULKUPDATE: both drivers answer with the number of rows the statement changed.
  const n = (await db.sequelize.query(sql, { replacements, transaction: t, type: QueryTypes.BULKUPDATE })) as unknown as number;
  return Number(n) === 1;
}

/** Resolves an open incident: true when this call resolved it. */
export function resolveIncident(db: Database, id: number, at: Date, details: Record<string, unknown>, t: Transaction): Promise<boolean> {
  return changesOne(db, 'UPDATE incidents SET resolved_at = ?, open_key = NULL, details = ? WHERE id = ? AND resolved_at IS NULL', [storedTime(at), JSON.stringify(details), id], t);
}

/** Marks a repeat of an open, unacknowledged incident last notified at `was`: true when this call made it. */
export function repeatIncident(db: Database, id: number, was: Date, at: Date, t: Transaction): Promise<boolean> {
  return changesOne(
    db,
    'UPDATE incidents SET last_notified_at = ? WHERE id = ? AND resolved_at IS NULL AND acked_at IS NULL AND last_notified_at = ?',
    [storedTime(at), id, storedTime(was)],
    t,
  );
}

/** Reopens a resolved incident (a flapping rig): true when this call reopened it. */
export function reopenIncident(db: Database, row: IncidentRow, at: Date, details: Record<string, unknown>, t: Transaction): Promise<boolean> {
  return changesOne(
    db,
    'UPDATE incidents SET resolved_at = NULL, open_key = ?, count = count + 1, last_notified_at = ?, details = ? WHERE id = ? AND resolved_at IS NOT NULL AND count = ?',
    [openKey(row.kind, row.subject), storedTime(at), JSON.stringify(details), row.id, row.count],
    t,
  );
}

/** Changes an open incident's details (and count) as read: true when nothing else changed it first. */
export function updateOpenIncident(db: Database, row: IncidentRow, details: Record<string, unknown>, count: number, t: Transaction): Promise<boolean> {
  return changesOne(db, 'UPDATE incidents SET details = ?, count = ? WHERE id = ? AND resolved_at IS NULL AND count = ? AND details = ?', [JSON.stringify(details), count, row.id, row.count, JSON.stringify(row.details)], t);
}

/** Acknowledges an incident (no more repeats): false when it does not exist or was acknowledged. */
export async function ackIncident(db: Database, id: number, by: string, at: Date): Promise<boolean> {
  return db.writes.run((t) => changesOne(db, 'UPDATE incidents SET acked_at = ?, acked_by = ? WHERE id = ? AND acked_at IS NULL', [storedTime(at), by, id], t));
}

/** Open incidents per kind. */
export async function openIncidentTally(reader: Reader): Promise<Map<string, number>> {
  const rows = await reader.all<{ kind: string; n: number | string }>('SELECT kind, COUNT(*) AS n FROM incidents WHERE resolved_at IS NULL GROUP BY kind');
  return new Map(rows.map((r) => [r.kind, Number(r.n)]));
}
