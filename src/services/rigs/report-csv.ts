import { toCsv } from '../csv.ts';
import type { HistoryEntry } from './history.ts';
import type { RigReportView } from './view.ts';

/**
 * The rig report history as CSV (GET /api/v1/rigs/:id/reports?format=csv and `rigd rigs history --csv`):
 * the columns and names of the JSON history (HistoryEntry); rig-reported text guarded against spreadsheet formulas.
 */
const COLUMNS: { name: keyof HistoryEntry; text?: boolean }[] = [
  { name: 'received_at' },
  { name: 'rig_serial', text: true },
  { name: 'gpsd_latitude' },
  { name: 'gpsd_longitude' },
  { name: 'local_ip' },
  { name: 'software_version', text: true },
  { name: 'git_branch', text: true },
  { name: 'peer_address' },
];

export function reportsCsv(rows: HistoryEntry[]): string {
  return toCsv(
    COLUMNS.map((c) => ({ name: c.name, get: (r: HistoryEntry) => r[c.name], text: c.text })),
    rows,
  );
}

/** A stored history row as JSON and CSV name it (times ISO 8601 UTC ending in Z). */
export function asReportRow(r: RigReportView): HistoryEntry {
  return {
    received_at: r.received_at.toISOString(),
    rig_serial: r.serial,
    gpsd_latitude: r.latitude,
    gpsd_longitude: r.longitude,
    local_ip: r.lan_ip,
    software_version: r.version,
    git_branch: r.branch,
    peer_address: r.peer_address,
  };
}
