/**
 * The identity refusals condition (rig_refused, key_refused): one incident per kind and source
 * address, whatever the number of rig ids that address used. A stolen or cloned rig cycling through
 * the fleet's ids is one box: one incident (one notification) naming its address, how many refusals,
 * how many rig ids and the first few, when, and the command that lists them.
 */
import { identityRefusals as refusalTallies, type RefusalKind, type RefusalTally } from '../../db/audit-refusals.ts';
import type { CheckContext, Condition } from './condition.ts';
import type { IncidentKind } from './event.ts';

/** How long an identity refusal stays news (seconds). */
export const REFUSALS_RECENT_S = 3600;
/** Most rig ids a refusal incident names (the rest counted). */
export const LISTED_IDS = 5;

/** The subject of a refusal incident whose entries recorded no address (key.refused written before addresses were). */
export const UNKNOWN_ADDRESS = 'unknown address';

const KINDS: Record<RefusalKind, IncidentKind> = { 'rig.refused': 'rig_refused', 'key.refused': 'key_refused' };

const iso = (ms: number) => new Date(ms).toISOString();
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The ids named: all of them up to LISTED_IDS, else the first ones and how many more. */
export function idsText(ids: string[]): string {
  return ids.length <= LISTED_IDS ? ids.join(', ') : `${ids.slice(0, LISTED_IDS).join(', ')} and ${ids.length - LISTED_IDS} more`;
}

/** The command that lists an address's refusals of that kind (without an address: all of that kind). */
export function auditCommand(kind: RefusalKind, address: string | null): string {
  return address === null ? `rigd audit --since 1h --kind ${kind}` : `rigd audit --since 1h --client ${address} --kind ${kind}`;
}

function whatText(t: RefusalTally): string {
  const one = t.rigs.length === 1;
  const refusals = plural(t.n, 'refusal');
  if (t.kind === 'rig.refused') {
    return one
      ? `${refusals} for rig id ${t.rigs[0]}, which is bound to another VPN address`
      : `${refusals} for ${t.rigs.length} rig ids bound to other VPN addresses (${idsText(t.rigs)})`;
  }
  return one ? `${refusals} of keys that belong to rig ${t.rigs[0]}` : `${refusals} of keys that belong to ${t.rigs.length} other rigs (${idsText(t.rigs)})`;
}

/** The line of a refusal incident (also its text when repeated, and after "resolved: "). */
export function refusalText(t: RefusalTally): string {
  const what = t.kind === 'rig.refused' ? 'reports' : 'uploads';
  const from = t.address ?? UNKNOWN_ADDRESS;
  return `${what} from ${from} refused: ${whatText(t)}, first at ${iso(t.first)}, last at ${iso(t.last)}; see them: ${auditCommand(t.kind, t.address)}`;
}

export function refusalCondition(t: RefusalTally): Condition {
  return {
    kind: KINDS[t.kind],
    subject: t.address ?? UNKNOWN_ADDRESS,
    // The rig page and the e-mail's rig lines are about one rig: only when the address used one id (a clone).
    rig: t.rigs.length === 1 ? t.rigs[0] : undefined,
    details: {
      address: t.address,
      refusals: t.n,
      rig_ids: t.rigs.length,
      rigs: t.rigs.slice(0, LISTED_IDS),
      first_at: iso(t.first),
      last_at: iso(t.last),
      audit: auditCommand(t.kind, t.address),
    },
    text: refusalText(t),
    refresh: true,
  };
}

/** Identity refusals of the audit log within the last REFUSALS_RECENT_S, one condition per kind and source address. */
export async function identityRefusals(ctx: CheckContext): Promise<Condition[]> {
  const tallies = await refusalTallies(ctx.reader, ctx.now.getTime() - REFUSALS_RECENT_S * 1000);
  return tallies.map(refusalCondition);
}
