import { UsageError } from './fail.ts';

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
/** Longest window: ten years (history is kept for rigs.history_retention_days anyway). */
const MAX_MS = 3650 * UNIT_MS.d!;

/** `--since 30m | 24h | 7d | 2w | 1h30m` in milliseconds; anything else is a usage error (exit 2). */
export function parseSince(value: string): number {
  const text = value.trim().toLowerCase();
  let ms = 0;
  const parts = /^(?:\d{1,6}[smhdw])+$/.test(text) ? text.match(/\d+[smhdw]/g)! : [];
  for (const part of parts) ms += Number(part.slice(0, -1)) * UNIT_MS[part.slice(-1)]!;
  if (parts.length === 0 || ms <= 0 || ms > MAX_MS) {
    const shown = value.replace(/\p{C}/gu, '?').slice(0, 40);
    throw new UsageError(`--since must be a duration such as 30m, 24h or 7d (s, m, h, d, w; at most 3650d), got "${shown}"`);
  }
  return ms;
}
