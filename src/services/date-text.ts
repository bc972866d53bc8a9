/**
 * Absolute times as people and scripts read them, naming their zone (the gateway's local zone, TZ)
 * so that nobody has to guess what "07:37" means. Relative ones ("5 minutes ago"): time-ago.ts.
 */

const pad = (n: number, width = 2) => String(Math.abs(n)).padStart(width, '0');

/** The local UTC offset of `d` as +HH:MM (never "Z"). */
export function utcOffset(d: Date): string {
  const minutes = -d.getTimezoneOffset();
  return `${minutes < 0 ? '-' : '+'}${pad(Math.trunc(minutes / 60))}:${pad(minutes % 60)}`;
}

function localParts(d: Date): { date: string; time: string; ms: string } {
  return {
    date: `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`,
    time: `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`,
    ms: pad(d.getMilliseconds(), 3),
  };
}

/** ISO 8601 in local time with its offset: 2026-11-23T08:37:30+01:00 (with `ms`: 08:37:30.123+01:00). */
export function isoWithOffset(d: Date, opts: { ms?: boolean } = {}): string {
  const p = localParts(d);
  return `${p.date}T${p.time}${opts.ms ? `.${p.ms}` : ''}${utcOffset(d)}`;
}

/** The short name of the local zone at `d` ("UTC", "CET"), or null when the platform only knows "GMT+1". */
function zoneName(d: Date): string | null {
  // Not cached: a format keeps the zone it was made in.
  const name = new Intl.DateTimeFormat('en-GB', { timeZoneName: 'short' }).formatToParts(d).find((p) => p.type === 'timeZoneName')?.value ?? '';
  return /^[A-Z]{2,5}$/.test(name) ? name : null;
}

/** The local zone's short name at `d`, else its offset: "CET", "+05:30". */
function zoneText(d: Date): string {
  return zoneName(d) ?? utcOffset(d);
}

/**
 * How a time is written for people, always naming its zone:
 * - 'full' (the gateway's local zone): "2026-11-23 08:37:30 +01:00 (CET)"; the name is left out
 *   when the platform knows the zone only as an offset.
 * - 'clock' (local): the time of day alone, "08:37:30 CET" (status lines of the watch views).
 * - 'utc-minute': "2026-11-23 07:37 UTC", whatever the local zone (tables that must not depend on it).
 */
export type DateForm = 'full' | 'clock' | 'utc-minute';

/** The one date text of the CLI, the views and the pages (machines get ISO 8601: toISOString, isoWithOffset). */
export function dateText(d: Date, form: DateForm = 'full'): string {
  if (form === 'utc-minute') return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const p = localParts(d);
  if (form === 'clock') return `${p.time} ${zoneText(d)}`;
  const name = zoneName(d);
  return `${p.date} ${p.time} ${utcOffset(d)}${name ? ` (${name})` : ''}`;
}
