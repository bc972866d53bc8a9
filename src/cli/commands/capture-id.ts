import { UsageError } from '../fail.ts';

/** A capture id argument: a positive integer, else a usage error (exit 2). */
export function parseCaptureId(text: string): number {
  const id = /^[1-9]\d{0,15}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(id)) throw new UsageError(`capture id must be a positive integer, got ${JSON.stringify(text)}`);
  return id;
}
