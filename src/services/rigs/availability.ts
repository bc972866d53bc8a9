import type { Config } from '../../config/schema.ts';
import type { Reader } from '../../db/reader.ts';
import { reportBounds, reportGaps, reportTimesSince } from '../../db/rigs/availability.ts';

/**
 * When a rig was offline, derived at read time from its report history (nothing is stored): a gap
 * longer than rigs.offline_after_s between two consecutive reports is an offline period from the
 * earlier report to the later one; a last report older than offline_after_s starts a period that
 * lasts until now. The database does the pairing (LAG over the reports), so only gaps come back.
 */
export interface OfflinePeriod {
  /** The last report before the gap (clipped to the window start), ISO 8601 UTC (`...Z`). */
  start: string;
  /** The first report after the gap; null: still offline now. */
  end: string | null;
  duration_s: number;
}

export interface OnlineShare {
  /** Percent of `window_s` the rig was not in an offline period; null: no report at all by then. */
  percent: number | null;
  /** The denominator: the window, clipped to the rig's first retained report when that is younger. */
  window_s: number;
  /** The window was clipped to the first retained report. */
  clipped: boolean;
}

export interface Availability {
  offline_after_s: number;
  /** Offline periods overlapping the last 7 days, newest first. */
  offline_periods: OfflinePeriod[];
  online_24h: OnlineShare;
  online_7d: OnlineShare;
  /** The oldest retained report (history older than rigs.history_retention_days is gone). */
  first_report: string | null;
  history_retention_days: number;
}

export const DAY_S = 86_400;
export const WEEK_S = 7 * DAY_S;

/** A duration in words to the minute: "2 h 5 min", "45 s". */
export function durationText(s: number): string {
  if (s < 60) return `${s} s`;
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return [d && `${d} d`, h && `${h} h`, m && `${m} min`].filter(Boolean).join(' ') || '0 min';
}

type AvailabilityConfig = Pick<Config, 'rigs'>;

const iso = (ms: number) => new Date(ms).toISOString();

/** A gap as [start, end) in epoch ms; end null: open until now. */
interface Gap {
  start: number;
  end: number | null;
}

/** Offline gaps of one rig that end after `since` (the report before `since` is paired too). */
async function gapsSince(reader: Reader, rigId: string, since: Date, offlineAfterS: number): Promise<{ gaps: Gap[]; first: number | null; last: number | null }> {
  const [gaps, bounds] = await Promise.all([reportGaps(reader, rigId, since, offlineAfterS), reportBounds(reader, rigId)]);
  return { gaps, ...bounds };
}

/** Closes the history with the open gap since the last report, if it is older than offline_after_s. */
function withOpenGap(gaps: Gap[], last: number | null, now: number, offlineAfterS: number): Gap[] {
  if (last !== null && now - last > offlineAfterS * 1000) return [...gaps, { start: last, end: null }];
  return gaps;
}

/** The online share of [now - windowS, now], clipped to the first report. */
export function onlineShare(gaps: Gap[], first: number | null, now: number, windowS: number): OnlineShare {
  const windowStart = now - windowS * 1000;
  if (first === null || first >= now) return { percent: null, window_s: 0, clipped: first !== null };
  const from = Math.max(windowStart, first);
  const span = now - from;
  let offline = 0;
  for (const g of gaps) {
    const s = Math.max(g.start, from);
    const e = Math.min(g.end ?? now, now);
    if (e > s) offline += e - s;
  }
  const percent = span <= 0 ? 100 : Math.round(((span - offline) / span) * 10_000) / 100;
  return { percent, window_s: Math.round(span / 1000), clipped: first > windowStart };
}

/** Offline periods, online shares over 24 h and 7 days, for one rig (by its canonical id). */
export async function rigAvailability(reader: Reader, config: AvailabilityConfig, rigId: string, now: Date): Promise<Availability> {
  const offlineAfterS = config.rigs.offline_after_s;
  const nowMs = now.getTime();
  const weekStart = nowMs - WEEK_S * 1000;
  const { gaps, first, last } = await gapsSince(reader, rigId, new Date(weekStart), offlineAfterS);
  const all = withOpenGap(gaps, last, nowMs, offlineAfterS).filter((g) => (g.end ?? nowMs) > weekStart);
  const periods = all
    .map((g) => {
      const start = Math.max(g.start, weekStart);
      const end = g.end ?? nowMs;
      return { start: iso(start), end: g.end === null ? null : iso(g.end), duration_s: Math.round((end - start) / 1000) };
    })
    .reverse();
  return {
    offline_after_s: offlineAfterS,
    offline_periods: periods,
    online_24h: onlineShare(all, first, nowMs, DAY_S),
    online_7d: onlineShare(all, first, nowMs, WEEK_S),
    first_report: first === null ? null : iso(first),
    history_retention_days: config.rigs.history_retention_days,
  };
}

/** Where each rig's current stretch began: online_since (first report after the last gap) or offline_since (its last report). */
export interface Stretch {
  online_since: string | null;
  offline_since: string | null;
}

/** How far back the listings look for the start of the current online stretch (at least 2 × offline_after_s). */
export const STRETCH_LOOKBACK_S = DAY_S;

const DIGIT_0 = 48;
/** Digits text[from, from + n) as a number (the caller has checked the shape). */
function digits(text: string, from: number, n: number): number {
  let v = 0;
  for (let i = from; i < from + n; i++) v = v * 10 + text.charCodeAt(i) - DIGIT_0;
  return v;
}

/**
 * Epoch ms of text[start, end), a time as Sequelize writes it ("2026-11-23 07:37:30.123 +00:00",
 * read without allocating); anything else goes through Date.
 */
export function storedTimeMs(text: string, start: number, end: number): number {
  if (end - start === 30 && text.charCodeAt(start + 10) === 32 && text.startsWith('+00:00', start + 24)) {
    return Date.UTC(
      digits(text, start, 4),
      digits(text, start + 5, 2) - 1,
      digits(text, start + 8, 2),
      digits(text, start + 11, 2),
      digits(text, start + 14, 2),
      digits(text, start + 17, 2),
      digits(text, start + 20, 3),
    );
  }
  return new Date(text.slice(start, end)).getTime();
}

/**
 * online_since / offline_since of every rig from the last 24 h of history: a rig online for longer
 * than that shows its first report in the window ("at least since"). The database only walks each
 * rig's reports of the window along the (rig_id, received_at) index and hands them back as one
 * ordered list per rig, as stored (converting ~320,000 times to numbers in SQL cost more than
 * reading the few needed here); the last gap is found walking that text backwards. (A LAG window
 * over the same rows made SQLite sort and window ~330,000 rows for 10,000 rigs: most of a second.)
 */
export async function fleetStretches(reader: Reader, config: AvailabilityConfig, now: Date): Promise<Map<string, Stretch>> {
  const offlineAfterMs = config.rigs.offline_after_s * 1000;
  const from = new Date(now.getTime() - Math.max(STRETCH_LOOKBACK_S * 1000, 2 * offlineAfterMs));
  const rows = await reportTimesSince(reader, from);
  const out = new Map<string, Stretch>();
  for (const r of rows) {
    // Oldest first: walk back from the newest report to the first gap (no array of all the times).
    const times = r.times;
    let end = times.length;
    let since = NaN;
    let last = NaN;
    while (end > 0) {
      const start = times.lastIndexOf(',', end - 1) + 1;
      const at = storedTimeMs(times, start, end);
      if (Number.isNaN(last)) last = at;
      else if (since - at > offlineAfterMs) break;
      since = at;
      end = start - 1;
    }
    const offline = now.getTime() - last > offlineAfterMs;
    out.set(r.rig_id, { online_since: offline ? null : iso(since), offline_since: offline ? iso(last) : null });
  }
  return out;
}

/**
 * The listing with online_since / offline_since added (additive fields; `--json` and the API). A rig
 * with no report in the lookback window is offline since its last report (rigs.last_seen_at).
 */
export async function withStretches<T extends { id: string; last_seen_at: Date }>(reader: Reader, config: AvailabilityConfig, rigs: T[], now: Date): Promise<(T & Stretch)[]> {
  if (rigs.length === 0) return [];
  const stretches = await fleetStretches(reader, config, now);
  return rigs.map((r) => {
    const known = stretches.get(r.id);
    if (known) return { ...r, ...known };
    const offline = now.getTime() - r.last_seen_at.getTime() > config.rigs.offline_after_s * 1000;
    return { ...r, online_since: null, offline_since: offline ? iso(r.last_seen_at.getTime()) : null };
  });
}
