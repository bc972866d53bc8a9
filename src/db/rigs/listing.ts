/**
 * The rigs and their report history as listings read them: every rig, one rig, the map's markers,
 * a rig's history, track and fixes, and when each version was first reported. Plain SQL on a
 * Reader, so the CLI runs the same statements without loading Sequelize.
 */
import type { Reader } from '../reader.ts';
import type { ReportFields } from '../rigs.ts';
import { sqlTime, type StoredTime } from '../stored-time.ts';

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
  last_seen_at: StoredTime;
  current_project: string | null;
  created_at: StoredTime;
  /** The rig's rhythm (null: not learned yet). */
  report_interval_s?: number | null;
  report_intervals?: number | null;
}

const RIG_SELECT =
  'SELECT id, serial, lan_ip, vpn_address, bound_address, version, branch, latitude, longitude, last_seen_at, current_project, created_at, report_interval_s, report_intervals FROM rigs';

/** Every rig, in no particular order. */
export function rigRows(reader: Reader): Promise<RigRow[]> {
  return reader.all<RigRow>(RIG_SELECT);
}

/** The rig with this (canonical) id, or null. */
export async function rigRow(reader: Reader, id: string): Promise<RigRow | null> {
  const rows = await reader.all<RigRow>(`${RIG_SELECT} WHERE id = ?`, [id]);
  return rows[0] ?? null;
}

/** A rig on the map: where it is, or (fix_at set) its last known fix. */
export interface MapRow {
  id: string;
  latitude: number;
  longitude: number;
  last_seen_at: StoredTime;
  branch: string;
  version: string;
  /** Only for a rig without a position now: when it was at its last fix. */
  fix_at?: StoredTime;
  report_interval_s?: number | null;
  report_intervals?: number | null;
}

/** Per rig without a position now, its newest report with one (both engines). */
const LAST_FIX_SQL = `SELECT r.id, f.latitude, f.longitude, f.received_at AS fix_at, r.last_seen_at, r.branch, r.version, r.report_interval_s, r.report_intervals
  FROM rigs r
  JOIN rig_reports f ON f.id = (
    SELECT x.id FROM rig_reports x
     WHERE x.rig_id = r.id AND x.latitude IS NOT NULL AND x.longitude IS NOT NULL
     ORDER BY x.received_at DESC, x.id DESC LIMIT 1)
 WHERE r.latitude IS NULL OR r.longitude IS NULL`;

/**
 * Rigs with a position (their current one), then rigs without one at their last fix from the
 * report history (fix_at set); each part in id order.
 */
export async function mapRows(reader: Reader): Promise<{ current: MapRow[]; lastKnown: MapRow[] }> {
  const [current, lastKnown] = await Promise.all([
    reader.all<MapRow>('SELECT id, latitude, longitude, last_seen_at, branch, version, report_interval_s, report_intervals FROM rigs WHERE latitude IS NOT NULL AND longitude IS NOT NULL ORDER BY id', []),
    reader.all<MapRow>(LAST_FIX_SQL, []),
  ]);
  return { current, lastKnown };
}

/** A history row as the reader returns it. */
export interface HistoryRow extends ReportFields {
  received_at: StoredTime;
}

/** A rig's reports received at or after `since`, newest first, at most `limit`. */
export function historyRows(reader: Reader, rigId: string, since: Date, limit: number): Promise<HistoryRow[]> {
  return reader.all<HistoryRow>(
    'SELECT received_at, serial, lan_ip, peer_address, version, branch, latitude, longitude FROM rig_reports WHERE rig_id = ? AND received_at >= ? ORDER BY received_at DESC, id DESC LIMIT ?',
    [rigId, sqlTime(since), limit],
  );
}

/** A stored fix: where a report put the rig, and when. */
export interface FixRow {
  received_at: StoredTime;
  latitude: number;
  longitude: number;
}

/** A rig's reports with a fix (received at or after `since` when given), newest first, at most `limit`. */
export function fixRows(reader: Reader, rigId: string, q: { since?: Date; limit: number }): Promise<FixRow[]> {
  const window = q.since ? ' AND received_at >= ?' : '';
  return reader.all<FixRow>(
    `SELECT received_at, latitude, longitude FROM rig_reports WHERE rig_id = ?${window} AND latitude IS NOT NULL AND longitude IS NOT NULL ORDER BY received_at DESC, id DESC LIMIT ?`,
    q.since ? [rigId, sqlTime(q.since), q.limit] : [rigId, q.limit],
  );
}

/** The first retained report of each (branch, version) pair, by the pair's index; pairs with none left out. */
export async function firstReported(reader: Reader, pairs: { branch: string; version: string }[]): Promise<{ branch: string; version: string; first: Date }[]> {
  const rows = await Promise.all(
    pairs.map((p) =>
      reader.all<{ branch: string; version: string; first: StoredTime | null }>(
        'SELECT ? AS branch, ? AS version, MIN(received_at) AS first FROM rig_reports WHERE branch = ? AND version = ?',
        [p.branch, p.version, p.branch, p.version],
      ),
    ),
  );
  return rows.flatMap((list) => list.flatMap((r) => (r.first === null ? [] : [{ branch: r.branch, version: r.version, first: new Date(r.first) }])));
}

/** What incidents say of a rig: where and when it was last heard of, and its rhythm. */
export interface RigFacts {
  id: string;
  last_seen_at: StoredTime;
  latitude: number | null;
  longitude: number | null;
  version: string | null;
  branch: string | null;
  report_interval_s: number | null;
  report_intervals: number | null;
}

const FACTS_SELECT = 'SELECT id, last_seen_at, latitude, longitude, version, branch, report_interval_s, report_intervals FROM rigs';

/** The facts of every rig, in no particular order. */
export function rigFacts(reader: Reader): Promise<RigFacts[]> {
  return reader.all<RigFacts>(FACTS_SELECT);
}

/** The facts of rig `id`, or undefined. */
export async function rigFactsOf(reader: Reader, id: string): Promise<RigFacts | undefined> {
  const [row] = await reader.all<RigFacts>(`${FACTS_SELECT} WHERE id = ?`, [id]);
  return row;
}

/** Every rig's last report time and rhythm (what its status is computed from). */
export function rigRhythms(reader: Reader): Promise<{ last_seen_at: StoredTime; report_interval_s: number | null; report_intervals: number | null }[]> {
  return reader.all<{ last_seen_at: StoredTime; report_interval_s: number | null; report_intervals: number | null }>('SELECT last_seen_at, report_interval_s, report_intervals FROM rigs');
}
