import { formatDistance } from 'date-fns/formatDistance';

/** An age in few characters, in whole units rounded down: "45 s", "12 min", "30 h" (up to two days), "3 d". */
export function shortAge(at: Date, now: Date): string {
  const s = Math.max(0, Math.floor((now.getTime() - at.getTime()) / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 2 * 86400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86400)} d`;
}

/**
 * The one time-ago of the CLI, the views and the pages: how long before `now` `at` was. In words
 * for a glance, like Rails' time_ago_in_words ("5 minutes ago", "about 2 hours ago"; date-fns
 * formatDistance); `short` where room is scarce or the age is exact ("2 h ago", see shortAge).
 */
export function timeAgo(at: Date, now: Date, opts: { short?: boolean } = {}): string {
  return opts.short ? `${shortAge(at, now)} ago` : formatDistance(at, now, { addSuffix: true });
}
