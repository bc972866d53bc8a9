import { formatDistance } from 'date-fns/formatDistance';

/**
 * Times as people and scripts read them: relative words for a glance, and an absolute time that
 * names its zone (the gateway's local zone, TZ) so that nobody has to guess what "07:37" means.
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

/** For people: "2026-11-23 08:37:30 +01:00 (CET)"; the zone name is left out when it is only an offset. */
export function absoluteTime(d: Date): string {
  const p = localParts(d);
  const name = zoneName(d);
  return `${p.date} ${p.time} ${utcOffset(d)}${name ? ` (${name})` : ''}`;
}

/** Like Rails' time_ago_in_words: "5 minutes ago", "about 2 hours ago". */
export function timeAgo(d: Date, now: Date): string {
  return formatDistance(d, now, { addSuffix: true });
}
