/**
 * The identity refusals of the audit log (rig.refused, key.refused) as the alert checks tally them:
 * per kind and subject, how many since a time and the first and last of them.
 */
import type { Reader } from './reader.ts';

export interface RefusalTally {
  kind: 'rig.refused' | 'key.refused';
  subject: string | null;
  n: number;
  /** Epoch ms. */
  first: number;
  last: number;
}

/** Identity refusals recorded at or after `sinceMs` (epoch ms), one row per kind and subject. */
export async function identityRefusals(reader: Reader, sinceMs: number): Promise<RefusalTally[]> {
  const rows = await reader.all<{ kind: RefusalTally['kind']; subject: string | null; n: number; last: number; first: number }>(
    "SELECT kind, subject, COUNT(*) AS n, MAX(at_ms) AS last, MIN(at_ms) AS first FROM audit_log WHERE kind IN ('rig.refused', 'key.refused') AND at_ms >= ? GROUP BY kind, subject",
    [sinceMs],
  );
  return rows.map((r) => ({ kind: r.kind, subject: r.subject, n: Number(r.n), first: Number(r.first), last: Number(r.last) }));
}
