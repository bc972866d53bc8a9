/**
 * A rig is its VPN address: how one report is judged against its id's binding
 * (rigs.address_binding) and against the new ids its address registered this hour.
 */
import type { Config } from '../../config/schema.ts';
import type { BindingRow, Registrations } from '../../db/rigs.ts';
import { Conflict, Throttled, type DomainError } from '../../errors.ts';
import type { IdentityEventDetails, IdentityEventKind } from './identity-events.ts';

export type AddressBinding = Config['rigs']['address_binding'];

/** What becomes of one report. */
export type Verdict =
  /** Stored; `bind`: the id is (re)bound to the report's address with it. */
  | { kind: 'store'; register: boolean; bind: boolean; event?: IdentityEvent }
  /** Refused: nothing of it is stored. */
  | { kind: 'refuse'; error: DomainError; event: IdentityEvent };

export interface IdentityEvent {
  kind: IdentityEventKind;
  details: IdentityEventDetails;
}

const HOUR_MS = 3_600_000;

type RigsConfig = Pick<Config['rigs'], 'address_binding' | 'offline_after_s' | 'new_ids_per_address_per_hour'>;

/**
 * Judges a report for `id` from `peer` at `at`. `rig`: the id's binding (undefined: a new id);
 * `registered`: the ids `peer` registered within the last hour. Neither is changed.
 */
export function judgeReport(cfg: RigsConfig, id: string, peer: string, at: Date, rig: BindingRow | undefined, registered: Registrations): Verdict {
  if (!rig) {
    if (registered.count >= cfg.new_ids_per_address_per_hour) {
      const oldest = registered.oldest?.getTime() ?? at.getTime();
      const retry = Math.max(1, Math.ceil((oldest + HOUR_MS - at.getTime()) / 1000));
      const error = new Throttled(
        `rig ${id} not registered: this VPN address registered ${registered.count} new rig ids within the hour (rigs.new_ids_per_address_per_hour)`,
        retry,
        'too_many_new_rigs',
      );
      return { kind: 'refuse', error, event: { kind: 'quota_refused', details: { rig: `@${peer}`, bound: 'new_ids_per_address_per_hour', address: peer, id } } };
    }
    return { kind: 'store', register: true, bind: false };
  }
  const bound = rig.bound_address;
  if (bound === peer) return { kind: 'store', register: false, bind: false };
  if (bound === null) {
    // Forgotten by an operator: the next report binds it.
    return { kind: 'store', register: false, bind: true, event: { kind: 'rig_takeover', details: { rig: id, from: null, to: peer, why: 'unbound' } } };
  }
  if (cfg.address_binding === 'off') return { kind: 'store', register: false, bind: true };
  const silentS = (at.getTime() - rig.last_seen_at.getTime()) / 1000;
  if (cfg.address_binding === 'while_online' && silentS > cfg.offline_after_s) {
    return { kind: 'store', register: false, bind: true, event: { kind: 'rig_takeover', details: { rig: id, from: bound, to: peer, silent_s: Math.round(silentS) } } };
  }
  const why =
    cfg.address_binding === 'strict'
      ? 'it is bound to another VPN address (an operator can move it: rigd rigs rebind)'
      : `it is bound to another VPN address that reported within rigs.offline_after_s (${cfg.offline_after_s} s)`;
  return {
    kind: 'refuse',
    error: new Conflict(`rig ${id} refused: ${why}`, 'rig_bound_elsewhere'),
    event: { kind: 'rig_report_refused', details: { rig: id, bound: bound, address: peer, mode: cfg.address_binding } },
  };
}

/** One report as the gate sees it. */
export interface GateItem {
  rigId: string;
  peer: string;
  receivedAt: Date;
}

/** A batch judged in order: what each report becomes, with the state each earlier one left. */
export function judgeBatch<T extends GateItem>(
  cfg: RigsConfig,
  items: T[],
  rigs: Map<string, BindingRow>,
  registrations: Map<string, Registrations>,
): Verdict[] {
  const state = new Map(rigs);
  const counts = new Map(registrations);
  return items.map((item) => {
    const registered = counts.get(item.peer) ?? { count: 0, oldest: null };
    const verdict = judgeReport(cfg, item.rigId, item.peer, item.receivedAt, state.get(item.rigId), registered);
    if (verdict.kind === 'store') {
      const before = state.get(item.rigId);
      const bound = verdict.register || verdict.bind ? item.peer : (before?.bound_address ?? item.peer);
      const last = before && before.last_seen_at > item.receivedAt ? before.last_seen_at : item.receivedAt;
      state.set(item.rigId, { id: item.rigId, bound_address: bound, last_seen_at: last });
      if (verdict.register) counts.set(item.peer, { count: registered.count + 1, oldest: registered.oldest ?? item.receivedAt });
    }
    return verdict;
  });
}

/** The window of registrations a batch is judged against. */
export function registrationWindowStart(at: Date): Date {
  return new Date(at.getTime() - HOUR_MS);
}
