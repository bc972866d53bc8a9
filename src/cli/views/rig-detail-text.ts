import { durationText } from '../../services/rigs/availability.ts';
import type { RigDetail } from '../../services/rigs/detail.ts';
import type { HistoryEntry } from '../../services/rigs/history.ts';
import { dateText } from '../../services/date-text.ts';
import { renderTable } from '../table.ts';
import { terminalText } from '../terminal-text.ts';

export function positionText(lat: number | null, lon: number | null): string {
  return lat === null || lon === null ? '-' : `${lat.toFixed(5)},${lon.toFixed(5)}`;
}

/** The rig's position; without a fix in its last report, its last known one and how old it is. */
function positionLine(d: RigDetail): string {
  if (d.latitude !== null && d.longitude !== null) return positionText(d.latitude, d.longitude);
  if (!d.last_fix) return '- (no fix reported)';
  return `${positionText(d.last_fix.latitude, d.last_fix.longitude)} (last fix ${d.last_fix.age} ago, ${dateText(new Date(d.last_fix.at))}; no fix in the last report)`;
}

/** A stored ISO time for a table: to the second (JSON and CSV keep the milliseconds). */
const seconds = (iso: string) => iso.replace(/\.\d+(?=Z$|[+-]\d{2}:\d{2}$)/, '');

function indent(text: string): string {
  return text.replace(/^(?=.)/gm, '  ');
}

/**
 * `rigd rigs show ID`: the rig, its recent positions, uploads and captures. Reports are validated
 * printable, but rows may come from elsewhere (another version, a copied database): every field is
 * shown through terminalText, the tables through renderTable, which escapes its cells.
 */
export function rigDetailText(d: RigDetail): string {
  const fields: [string, string][] = [
    ['status', d.status_meaning],
    ['serial', d.serial],
    ['branch', `${d.branch} (${d.version})`],
    ['VPN address', `${d.vpn_address} (${d.vpn_name})`],
    ['bound to', d.bound_address ?? 'no address (its next report binds it)'],
    ['local_ip', d.lan_ip ?? '-'],
    ['position', positionLine(d)],
    ['project', d.current_project ?? '-'],
    ['last report', `${d.last_report.ago} (${dateText(new Date(d.last_report.at))})`],
    ['first seen', `${d.first_seen.ago} (${dateText(new Date(d.first_seen.at))})`],
  ];
  const width = Math.max(...fields.map(([k]) => k.length));
  let out = `${terminalText(`rig ${d.id}: ${d.status}`)}\n${fields.map(([k, v]) => terminalText(`  ${k.padEnd(width)}  ${v}`)).join('\n')}\n`;

  out += availabilityText(d);

  out += `\nrecent positions (from the report history, newest first)\n`;
  out += d.positions.length
    ? indent(renderTable(['POSITION', 'FROM', 'UNTIL', 'REPORTS'], d.positions.map((p) => [positionText(p.latitude, p.longitude), seconds(p.first_at), seconds(p.last_at), String(p.reports)])))
    : '  no report with a position fix\n';

  out += `\nuploads (${d.uploads.recent.length} of ${d.uploads.total}, newest first)\n`;
  out += d.uploads.recent.length
    ? indent(
        renderTable(
          ['ID', 'STATE', 'KEY', 'SIZE', 'RECEIVED', 'PROJECT', 'RESERVED'],
          d.uploads.recent.map((u) => [String(u.id), u.state, u.key, String(u.size), String(u.bytes_seen), u.project ?? '', seconds(u.created_at)]),
        ),
      )
    : '  none\n';

  out += `\ncaptures (${d.captures.recent.length} of ${d.captures.total}, newest first)\n`;
  out += d.captures.recent.length
    ? indent(
        renderTable(
          ['ID', 'STATE', 'KEY', 'SIZE', 'PROJECT', 'UPDATED', 'ERROR'],
          d.captures.recent.map((c) => [String(c.id), c.state, c.key, c.size === null ? '' : String(c.size), c.project ?? '', seconds(c.updated_at), c.error_code ?? '']),
        ),
      )
    : '  none\n';
  return out;
}

const pct = (p: number | null) => (p === null ? '-' : `${p}%`);

function availabilityText(d: RigDetail): string {
  const a = d.availability;
  const share = (label: string, s: RigDetail['availability']['online_24h']) =>
    `  online ${label}  ${pct(s.percent)}${s.clipped && s.percent !== null ? ` (of ${durationText(s.window_s)} since the first retained report)` : ''}\n`;
  let out = `\navailability (offline: no report for more than ${durationText(a.offline_after_s)}; history kept ${a.history_retention_days} days)\n`;
  out += share('last 24 h', a.online_24h) + share('last 7 d ', a.online_7d);
  out += `\noffline periods in the last 7 days (newest first)\n`;
  out += a.offline_periods.length
    ? indent(renderTable(['FROM', 'UNTIL', 'DURATION'], a.offline_periods.map((p) => [seconds(p.start), p.end === null ? 'now' : seconds(p.end), durationText(p.duration_s)])))
    : '  none\n';
  return out;
}

export const HISTORY_HEADER = ['TIME', 'POSITION', 'SERIAL', 'LOCAL IP', 'BRANCH (VERSION)', 'VPN ADDRESS'];

export function historyRow(e: HistoryEntry): string[] {
  return [seconds(e.received_at), positionText(e.gpsd_latitude, e.gpsd_longitude), e.rig_serial, e.local_ip ?? '-', `${e.git_branch} (${e.software_version})`, e.peer_address];
}
