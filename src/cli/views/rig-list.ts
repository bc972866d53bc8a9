import { RIG_STATUSES, type RigStatus } from '../../services/rigs/status.ts';
import type { RigView } from '../../services/rigs/view.ts';
import { timeAgo } from '../../services/time-ago.ts';

/** How the rig list is ordered: natural id order, or most recently seen first. */
export const RIG_SORTS = ['id', 'last-seen'] as const;
export type RigSort = (typeof RIG_SORTS)[number];

export interface RigFilter {
  status?: RigStatus;
  branch?: string;
}

export const RIG_HEADER = ['STATUS', 'ID', 'LAN IP', 'VPN NAME', 'BRANCH (VERSION)', 'LAST SEEN', 'POSITION', 'PROJECT'];

/** Per RIG_HEADER column: 0 always shown; on a narrow terminal the highest number goes first. */
export const RIG_PRIORITY = [0, 0, 4, 3, 1, 0, 5, 2];

/** Per RIG_HEADER column: how narrow it may be shortened (Infinity: never; addresses, times, positions), see fitLayout. */
export const RIG_FLOORS = [Infinity, undefined, Infinity, undefined, undefined, Infinity, Infinity, undefined];

/** Rigs passing the filter, in the chosen order (the service already returns natural id order). */
export function selectRigs(rigs: RigView[], filter: RigFilter, sort: RigSort): RigView[] {
  const out = rigs.filter((r) => (!filter.status || r.status === filter.status) && (!filter.branch || r.branch === filter.branch));
  if (sort === 'last-seen') out.sort((a, b) => b.last_seen_at.getTime() - a.last_seen_at.getTime());
  return out;
}

export function position(r: RigView): string {
  return r.latitude === null || r.longitude === null ? '-' : `${r.latitude.toFixed(4)},${r.longitude.toFixed(4)}`;
}

/** The cells of one rig, raw: the table renderers escape control characters (src/cli/terminal-text.ts). */
export function rigCells(r: RigView, now: Date): string[] {
  return [
    r.status,
    r.id,
    r.lan_ip ?? '-',
    r.vpn_name,
    `${r.branch} (${r.version})`,
    timeAgo(r.last_seen_at, now),
    position(r),
    r.current_project ?? '',
  ];
}

/** "3 rigs: 2 online, 1 stale, 0 offline · versions: main 1.4.2 ×2, dev 1.5.0 ×1" */
export function rigSummary(rigs: RigView[]): string {
  const counts = Object.fromEntries(RIG_STATUSES.map((s) => [s, 0])) as Record<RigStatus, number>;
  const versions = new Map<string, number>();
  for (const r of rigs) {
    counts[r.status] += 1;
    const v = `${r.branch} ${r.version}`;
    versions.set(v, (versions.get(v) ?? 0) + 1);
  }
  const fleet = [...versions].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([v, n]) => `${v} ×${n}`);
  const status = RIG_STATUSES.map((s) => `${counts[s]} ${s}`).join(', ');
  return `${rigs.length} rig${rigs.length === 1 ? '' : 's'}: ${status}${fleet.length ? ` · versions: ${fleet.join(', ')}` : ''}`;
}
