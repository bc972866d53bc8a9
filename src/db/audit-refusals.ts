/**
 * The identity refusals of the audit log (rig.refused, key.refused) as the alert checks tally them:
 * per kind and source address (the entry's client), how many since a time, the first and last of
 * them, and the rig ids they named. The rig id a refusal names is the one it was refused for: the
 * subject of rig.refused (the id bound to another address), the owner of the key of key.refused.
 */
import { forEngine } from './dialect/engine.ts';
import type { Reader } from './reader.ts';

export type RefusalKind = 'rig.refused' | 'key.refused';

export interface RefusalTally {
  kind: RefusalKind;
  /** The source address of the refusals; null for entries that recorded none (key.refused before addresses were recorded). */
  address: string | null;
  n: number;
  /** Epoch ms. */
  first: number;
  last: number;
  /** The rig ids named, in the order of their first refusal. */
  rigs: string[];
}

type Row = { kind: RefusalKind; client: string | null; rig: string | null; n: number | string; first: number | string; last: number | string };

/** Identity refusals recorded at or after `sinceMs` (epoch ms), one tally per kind and source address. */
export async function identityRefusals(reader: Reader, sinceMs: number): Promise<RefusalTally[]> {
  const owner = forEngine(reader.engine ?? 'sqlite', { postgres: "(details::jsonb ->> 'owner')", sqlite: "json_extract(details, '$.owner')" });
  // One row per kind, address and rig id named: as many as the (address, id) pairs refused, not as the refusals.
  const rows = await reader.all<Row>(
    `SELECT kind, client, rig, COUNT(*) AS n, MIN(at_ms) AS first, MAX(at_ms) AS last FROM (
       SELECT kind, client, at_ms, CASE WHEN kind = 'key.refused' THEN COALESCE(${owner}, subject) ELSE subject END AS rig
       FROM audit_log WHERE kind IN ('rig.refused', 'key.refused') AND at_ms >= ?
     ) r GROUP BY kind, client, rig ORDER BY MIN(at_ms), rig`,
    [sinceMs],
  );
  const tallies = new Map<string, RefusalTally>();
  for (const r of rows) {
    const key = `${r.kind}\0${r.client ?? ''}`;
    const tally = tallies.get(key) ?? { kind: r.kind, address: r.client, n: 0, first: Infinity, last: -Infinity, rigs: [] };
    tally.n += Number(r.n);
    tally.first = Math.min(tally.first, Number(r.first));
    tally.last = Math.max(tally.last, Number(r.last));
    if (r.rig !== null) tally.rigs.push(r.rig);
    tallies.set(key, tally);
  }
  return [...tallies.values()];
}
