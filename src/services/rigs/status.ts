/**
 * How recently a rig reported, judged by its own rhythm, computed when read (never stored). The one
 * rule for the page, the map, the CLI, `rigd fleet`, the watch events, the metrics and the alerts.
 *
 * A rig's rhythm is the median of its last intervals between reports (kept on its row by the
 * alerts sweep, src/services/alerts/rhythm.ts). With at least MIN_INTERVALS of them it is stale
 * (late) after LATE_INTERVALS intervals of silence and offline after alerts.missed_reports
 * intervals, never sooner than alerts.min_silence_s. With fewer, the fixed rigs.online_after_s and
 * rigs.offline_after_s apply.
 */
export const RIG_STATUSES = ['online', 'stale', 'offline'] as const;
export type RigStatus = (typeof RIG_STATUSES)[number];

/** Intervals a rig must have shown before its rhythm replaces the fixed thresholds. */
export const MIN_INTERVALS = 4;
/** Intervals of silence after which a rig with a rhythm is stale (late). */
export const LATE_INTERVALS = 1.5;

export interface StatusThresholds {
  rigs: {
    /** Reported within this many seconds: online (rigs without a rhythm). */
    online_after_s: number;
    /** Reported within this many seconds (and not online): stale; else offline (rigs without a rhythm). */
    offline_after_s: number;
  };
  alerts: { missed_reports: number; min_silence_s: number };
}

/** What the rigs row knows of a rig's rhythm (null: nothing learned yet). */
export interface Rhythm {
  interval_s: number | null;
  intervals: number | null;
}

/** Seconds of silence after which a rig is stale, and offline. */
export function statusEdges(rhythm: Rhythm | null | undefined, th: StatusThresholds): { stale_after_s: number; offline_after_s: number; by_rhythm: boolean } {
  const interval = rhythm?.interval_s ?? null;
  if (interval === null || !(interval > 0) || (rhythm?.intervals ?? 0) < MIN_INTERVALS) {
    return { stale_after_s: th.rigs.online_after_s, offline_after_s: th.rigs.offline_after_s, by_rhythm: false };
  }
  const offline = Math.max(th.alerts.missed_reports * interval, th.alerts.min_silence_s);
  return { stale_after_s: Math.min(LATE_INTERVALS * interval, offline), offline_after_s: offline, by_rhythm: true };
}

/** The status of a rig last heard of at lastSeenAt, now. */
export function rigStatus(lastSeenAt: Date, now: Date, th: StatusThresholds, rhythm?: Rhythm | null): RigStatus {
  const ageS = (now.getTime() - lastSeenAt.getTime()) / 1000;
  const edges = statusEdges(rhythm, th);
  if (ageS <= edges.stale_after_s) return 'online';
  if (ageS <= edges.offline_after_s) return 'stale';
  return 'offline';
}

const span = (s: number) => (s % 3600 === 0 ? `${s / 3600} h` : s % 60 === 0 ? `${s / 60} min` : `${Math.round(s * 10) / 10} s`);

/**
 * What a status means, in words. With a rig's rhythm (the dot's title on the rigs page, `rigs show`):
 * that rig's own thresholds. Without (the legend): the rule.
 */
export function statusMeaning(status: RigStatus, th: StatusThresholds, rhythm?: Rhythm | null): string {
  if (rhythm === undefined) {
    const base = fixedMeaning(status, th.rigs.online_after_s, th.rigs.offline_after_s);
    return `${base} (a rig with a rhythm: ${RHYTHM_WORDS[status](th)})`;
  }
  const e = statusEdges(rhythm, th);
  const text = fixedMeaning(status, e.stale_after_s, e.offline_after_s);
  return e.by_rhythm ? `${text} (it reports every ${span(rhythm!.interval_s!)})` : text;
}

function fixedMeaning(status: RigStatus, staleAfterS: number, offlineAfterS: number): string {
  switch (status) {
    case 'online':
      return `online: reported within ${span(staleAfterS)}`;
    case 'stale':
      return `stale: last report ${span(staleAfterS)} to ${span(offlineAfterS)} ago`;
    case 'offline':
      return `offline: no report for more than ${span(offlineAfterS)}`;
  }
}

const RHYTHM_WORDS: Record<RigStatus, (th: StatusThresholds) => string> = {
  online: () => `within ${LATE_INTERVALS} of its intervals`,
  stale: (th) => `late by ${LATE_INTERVALS} to ${th.alerts.missed_reports} of its intervals`,
  offline: (th) => `silent for ${th.alerts.missed_reports} of its intervals and at least ${span(th.alerts.min_silence_s)}`,
};

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/** Natural order of rig ids: rig2 before rig10. */
export function compareRigIds(a: string, b: string): number {
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
}
