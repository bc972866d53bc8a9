import { UsageError } from './fail.ts';

/** Default refresh of the --watch views. */
export const DEFAULT_INTERVAL_S = 2;

/** `--interval S` (seconds, 0.2 to 3600, decimals allowed) in milliseconds. */
export function parseInterval(value: string | undefined): number {
  if (value === undefined) return DEFAULT_INTERVAL_S * 1000;
  const s = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || s < 0.2 || s > 3600) throw new UsageError(`--interval must be seconds from 0.2 to 3600, got "${value}"`);
  return Math.round(s * 1000);
}
