/** How recently a rig reported, computed when read (never stored). */
export const RIG_STATUSES = ['online', 'stale', 'offline'] as const;
export type RigStatus = (typeof RIG_STATUSES)[number];

export interface StatusThresholds {
  /** Reported within this many seconds: online. */
  online_after_s: number;
  /** Reported within this many seconds (and not online): stale; else offline. */
  offline_after_s: number;
}

export function rigStatus(lastSeenAt: Date, now: Date, th: StatusThresholds): RigStatus {
  const ageS = (now.getTime() - lastSeenAt.getTime()) / 1000;
  if (ageS <= th.online_after_s) return 'online';
  if (ageS <= th.offline_after_s) return 'stale';
  return 'offline';
}

/** What each status means, in words (title of the dot on the rigs page, legend, CLI). */
export function statusMeaning(status: RigStatus, th: StatusThresholds): string {
  const span = (s: number) => (s % 3600 === 0 ? `${s / 3600} h` : s % 60 === 0 ? `${s / 60} min` : `${s} s`);
  switch (status) {
    case 'online':
      return `online: reported within ${span(th.online_after_s)}`;
    case 'stale':
      return `stale: last report ${span(th.online_after_s)} to ${span(th.offline_after_s)} ago`;
    case 'offline':
      return `offline: no report for more than ${span(th.offline_after_s)}`;
  }
}

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/** Natural order of rig ids: rig2 before rig10. */
export function compareRigIds(a: string, b: string): number {
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
}
