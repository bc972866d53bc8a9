import type { Database } from '../../db/index.ts';
import { rigsDueForRhythm, storeRhythms } from '../../db/rig-rhythm.ts';

/** Intervals a rhythm is learned from: the median of a rig's last RHYTHM_INTERVALS. */
export const RHYTHM_INTERVALS = 20;
/** Rigs whose rhythm one sweep refreshes at most (those that reported since, newest first). */
export const RHYTHM_BATCH = 500;

/** Gaps shorter than this are bursts (retries, a rig catching up, a script), not a rhythm: left out. */
export const MIN_GAP_S = 0.5;

/** The median of the intervals (seconds) between consecutive times, newest first; null with none. */
export function medianInterval(newestFirst: Date[]): { interval_s: number | null; intervals: number } {
  const gaps: number[] = [];
  for (let i = 1; i < newestFirst.length; i++) {
    const gap = (newestFirst[i - 1]!.getTime() - newestFirst[i]!.getTime()) / 1000;
    if (gap >= MIN_GAP_S) gaps.push(gap);
  }
  if (gaps.length === 0) return { interval_s: null, intervals: 0 };
  gaps.sort((a, b) => a - b);
  const mid = gaps.length >> 1;
  const median = gaps.length % 2 === 1 ? gaps[mid]! : (gaps[mid - 1]! + gaps[mid]!) / 2;
  return { interval_s: Math.round(median * 1000) / 1000, intervals: gaps.length };
}

/**
 * Learns the rhythm of the rigs that reported since it was last learned: one read of their newest
 * reports (an index lookup each, never a scan of the history) and one write that stores them all.
 * Returns how many rigs it refreshed.
 */
export async function refreshRhythms(db: Database, limit = RHYTHM_BATCH): Promise<number> {
  const due = await rigsDueForRhythm(db, limit, RHYTHM_INTERVALS + 1);
  if (due.length === 0) return 0;
  const learned = due.map((r) => ({ id: r.id, ...medianInterval(r.newestFirst) }));
  await db.writes.run((t) => storeRhythms(db, learned, t));
  return due.length;
}
