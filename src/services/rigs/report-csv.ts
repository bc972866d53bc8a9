import { toCsv } from '../csv.ts';
import type { HistoryEntry } from './history.ts';
import type { RigReportView } from './view.ts';

/** A report as the rig sent it (its own field names), as the CSV export writes it. */
type ReportRow = Omit<HistoryEntry, 'received_at'> & { received_at: string | Date };

/**
 * The rig report history as CSV (GET /api/v1/rigs/:id/reports?format=csv and `rigd rigs history --csv`):
 * the rig's own field names; rig-reported text guarded against spreadsheet formulas.
 */
const COLUMNS: { name: keyof ReportRow; text?: boolean }[] = [
  { name: 'received_at' },
  { name: 'rig_serial', text: true },
  { name: 'latitude' },
  { name: 'longitude' },
  { name: 'local_ip' },
  { name: 'software_version', text: true },
  { name: 'git_branch', text: true },
  { name: 'peer_address' },
];

/** Header names as the rig sends them (gpsd_latitude, gpsd_longitude). */
const HEADER: Partial<Record<keyof ReportRow, string>> = { latitude: 'gpsd_latitude', longitude: 'gpsd_longitude' };

export function reportsCsv(rows: ReportRow[]): string {
  return toCsv(
    COLUMNS.map((c) => ({ name: HEADER[c.name] ?? c.name, get: (r: ReportRow) => r[c.name], text: c.text })),
    rows,
  );
}

/** A stored history row under the rig's own field names. */
export function asReportRow(r: RigReportView): ReportRow {
  return {
    received_at: r.received_at,
    rig_serial: r.serial,
    latitude: r.latitude,
    longitude: r.longitude,
    local_ip: r.lan_ip,
    software_version: r.version,
    git_branch: r.branch,
    peer_address: r.peer_address,
  };
}
