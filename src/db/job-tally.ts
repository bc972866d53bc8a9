/** The queue's jobs counted by state, as metrics read them when scraped. */
import type { Reader } from './reader.ts';

/** Per job state: how many jobs, and how many of them are of `kind`. */
export async function jobTally(reader: Reader, kind: string): Promise<Map<string, { n: number; ofKind: number }>> {
  const rows = await reader.all<{ state: string; n: number | string; of_kind: number | string | null }>(
    'SELECT state, COUNT(*) AS n, SUM(CASE WHEN kind = ? THEN 1 ELSE 0 END) AS of_kind FROM jobs GROUP BY state',
    [kind],
  );
  return new Map(rows.map((r) => [r.state, { n: Number(r.n), ofKind: Number(r.of_kind ?? 0) }]));
}
