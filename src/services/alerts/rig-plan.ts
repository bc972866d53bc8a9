/**
 * What the rigs' statuses mean for the incidents (pure: the sweep reads, this decides, the sweep
 * writes each decision as one conditional transition).
 *
 * - A rig offline with no open incident gets a rig_offline incident, unless it is part of a fleet
 *   outage: more than alerts.outage_share of the rigs that were online went silent within one of
 *   their intervals. Then one fleet_outage names them all; while such a silence is only late, no
 *   rig_offline opens (the outage may be forming).
 * - The outage resolves when no more than outage_share of its rigs are still missing; those then get
 *   their own rig_offline at the next sweep. A rig that was still reporting when the outage opened
 *   (no report of it missed yet) and went offline since is not part of it: its own rig_offline.
 * - A rig_offline incident resolves when its rig is back. A flapping one (reopened: see the sweep)
 *   resolves only once the rig has stayed back for the flap window (3600 / alerts.flaps_per_hour s);
 *   going offline again within it folds into the incident (its count).
 */
import type { IncidentRow } from '../../db/incidents.ts';
import type { RigStatus } from '../rigs/status.ts';

export interface RigNow {
  id: string;
  lastSeen: Date;
  /** By its last report: what open incidents are judged by (back or still missing). */
  status: RigStatus;
  /**
   * By its silence since rigd has run without a break (or since its last report, the later): what
   * new incidents are opened by. rigd away is not the rig's silence, but an incident open from
   * before stays open until the rig reports.
   */
  silence: RigStatus;
  /** Seconds between its reports: learned, else rigs.online_after_s. */
  intervalS: number;
}

export interface RigPlan {
  openOutage: string[] | null;
  /** The open outage to resolve, with the rigs still missing. */
  resolveOutage: { incident: IncidentRow; missing: string[] } | null;
  /** Rigs already silent when the open outage opened, offline now: added to it. */
  joinOutage: string[];
  /** Offline rigs without an incident (the sweep reopens a flapping rig's recent one instead). */
  openRig: string[];
  resolveRig: IncidentRow[];
  /** Flapping incidents whose rig is back: the time it came back is noted. */
  markBack: IncidentRow[];
  /** Flapping incidents whose rig went offline again: folded in (count + 1). */
  fold: IncidentRow[];
}

export interface PlanInput {
  rigs: RigNow[];
  /** Open rig_offline incidents by rig id. */
  openRigIncidents: Map<string, IncidentRow>;
  outage: IncidentRow | null;
  outageShare: number;
  /** Seconds a flapping rig must stay back before its incident resolves. */
  settleS: number;
  now: Date;
}

export const outageRigs = (row: IncidentRow): string[] => (Array.isArray(row.details.rigs) ? (row.details.rigs as unknown[]).map(String) : []);

export function planRigs(input: PlanInput): RigPlan {
  const { rigs, openRigIncidents, outage, outageShare, now } = input;
  const plan: RigPlan = { openOutage: null, resolveOutage: null, joinOutage: [], openRig: [], resolveRig: [], markBack: [], fold: [] };
  const byId = new Map(rigs.map((r) => [r.id, r]));

  // Incidents of single rigs: back, flapping, folded.
  for (const [id, inc] of openRigIncidents) {
    const rig = byId.get(id);
    const backAt = typeof inc.details.back_at === 'string' ? new Date(inc.details.back_at) : null;
    if (!rig) {
      plan.resolveRig.push(inc); // forgotten
    } else if (rig.status === 'offline') {
      if (backAt) plan.fold.push(inc);
    } else if (rig.status === 'online') {
      if (inc.count <= 1) plan.resolveRig.push(inc);
      else if (!backAt) plan.markBack.push(inc);
      else if (now.getTime() - backAt.getTime() >= input.settleS * 1000) plan.resolveRig.push(inc);
    }
  }

  // The open outage: resolved when no more than outage_share of its rigs are still missing.
  const covered = new Set(outage ? outageRigs(outage) : []);
  if (outage) {
    const members = [...covered];
    const missing = members.filter((id) => byId.get(id)?.status !== 'online' && byId.has(id));
    if (missing.length <= outageShare * members.length) {
      plan.resolveOutage = { incident: outage, missing };
      covered.clear();
    }
  }

  // Silent rigs with no incident: one silence across the fleet, or single rigs.
  const silent = rigs.filter((r) => r.silence !== 'online' && !openRigIncidents.has(r.id) && !covered.has(r.id));
  if (silent.length === 0) return plan;
  if (outage && !plan.resolveOutage) {
    // The outage covers the rigs already silent when it opened (a report of theirs missed by then);
    // a rig still reporting then that went dark since is news of its own (an outage that never
    // resolves must not swallow it).
    const openedAt = outage.opened_at.getTime();
    const silentThen = (r: RigNow) => r.lastSeen.getTime() + r.intervalS * 1000 < openedAt;
    const offline = silent.filter((r) => r.silence === 'offline');
    plan.joinOutage = offline.filter(silentThen).map((r) => r.id);
    plan.openRig = offline.filter((r) => !silentThen(r)).map((r) => r.id);
    return plan;
  }
  const newest = Math.max(...silent.map((r) => r.lastSeen.getTime()));
  const together = silent.filter((r) => newest - r.lastSeen.getTime() <= Math.max(...silent.map((s) => s.intervalS)) * 1000);
  const wasOnline = rigs.filter((r) => r.silence === 'online').length + together.length;
  const offlineTogether = together.filter((r) => r.silence === 'offline');
  const fleetWide = together.length >= 2 && together.length > outageShare * wasOnline;
  if (fleetWide && !plan.resolveOutage) {
    if (offlineTogether.length > outageShare * wasOnline) plan.openOutage = together.map((r) => r.id);
    const held = new Set(together.map((r) => r.id));
    plan.openRig = silent.filter((r) => r.silence === 'offline' && !held.has(r.id)).map((r) => r.id);
    return plan;
  }
  plan.openRig = silent.filter((r) => r.silence === 'offline').map((r) => r.id);
  return plan;
}
