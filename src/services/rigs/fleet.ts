import type { Config } from '../../config/schema.ts';
import type { Reader } from '../../db/reader.ts';
import { firstReported } from '../../db/rigs/listing.ts';
import { listRigs } from './queries.ts';
import { RIG_STATUSES, compareRigIds, type RigStatus } from './status.ts';
import { compareVersions, newestVersion } from './version-order.ts';

export interface VersionCount {
  version: string;
  rigs: number;
  /** The first retained report of this version on this branch (null: none left in the history). */
  first_reported: string | null;
}

export interface BranchRollout {
  branch: string;
  rigs: number;
  /** The highest version its rigs are on now, by version order (src/services/rigs/version-order.ts). */
  newest_version: string;
  /** Newest first, by version order. */
  versions: VersionCount[];
  /** Rigs on this branch not on newest_version, in natural id order. */
  behind: { id: string; version: string; status: RigStatus }[];
}

export interface FleetSummary {
  rigs: number;
  by_status: Record<RigStatus, number>;
  by_branch: BranchRollout[];
  generated_at: string;
}

type FleetConfig = Pick<Config, 'rigs' | 'vpn' | 'alerts'>;

/**
 * Counts by status, by branch and by version, and each branch's rollout. The newest version of a
 * branch is the highest, by version order, of the versions its rigs are on now: a rig that went back
 * to an older version does not make that version newest, whenever it was first seen. Each version
 * also says when it was first reported on the branch (in the retained history).
 */
export async function fleetSummary(reader: Reader, config: FleetConfig, now: Date): Promise<FleetSummary> {
  const rigs = await listRigs(reader, config, now);
  // One index lookup per (branch, version) the fleet is on now (rig_reports_branch_version_received_at).
  const pairs = [...new Map(rigs.map((r) => [`${r.branch}\u0000${r.version}`, r])).values()];
  const firsts = await firstReported(reader, pairs);
  const firstOf = new Map(firsts.map((f) => [`${f.branch}\u0000${f.version}`, f.first.getTime()]));
  const byStatus = Object.fromEntries(RIG_STATUSES.map((s) => [s, 0])) as Record<RigStatus, number>;
  const branches = new Map<string, typeof rigs>();
  for (const r of rigs) {
    byStatus[r.status] += 1;
    const list = branches.get(r.branch) ?? [];
    list.push(r);
    branches.set(r.branch, list);
  }
  const byBranch: BranchRollout[] = [...branches.entries()]
    .sort(([a], [b]) => compareRigIds(a, b))
    .map(([branch, members]) => {
      const counts = new Map<string, number>();
      for (const r of members) counts.set(r.version, (counts.get(r.version) ?? 0) + 1);
      const first = (v: string) => firstOf.get(`${branch}\u0000${v}`) ?? null;
      const newest = newestVersion(counts.keys()) ?? members[0].version;
      const versions = [...counts.entries()]
        .map(([version, n]) => ({ version, rigs: n, first_reported: first(version) === null ? null : new Date(first(version)!).toISOString() }))
        .sort((a, b) => compareVersions(b.version, a.version));
      return {
        branch,
        rigs: members.length,
        newest_version: newest,
        versions,
        behind: members.filter((r) => r.version !== newest).map((r) => ({ id: r.id, version: r.version, status: r.status })),
      };
    });
  return { rigs: rigs.length, by_status: byStatus, by_branch: byBranch, generated_at: now.toISOString() };
}
