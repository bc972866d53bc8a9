/**
 * A rig's last known position: a report without a GPS fix (`nan`, empty) stores no position, so the
 * rig's current position is empty; the last fix is read back from the report history (the newest
 * report with one), with its time. Read side only: nothing is stored twice.
 */

/** SQL (both engines): per rig without a position now, its newest report with one. */
export const LAST_FIX_SQL = `SELECT r.id, f.latitude, f.longitude, f.received_at AS fix_at, r.last_seen_at, r.branch, r.version, r.report_interval_s, r.report_intervals
  FROM rigs r
  JOIN rig_reports f ON f.id = (
    SELECT x.id FROM rig_reports x
     WHERE x.rig_id = r.id AND x.latitude IS NOT NULL AND x.longitude IS NOT NULL
     ORDER BY x.received_at DESC, x.id DESC LIMIT 1)
 WHERE r.latitude IS NULL OR r.longitude IS NULL`;
