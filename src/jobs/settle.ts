import { setTimeout as sleep } from 'node:timers/promises';
import { isDatabaseUnavailable } from '../db/faults.ts';

/** Resolves or rejects with p; if signal aborts first, rejects with its reason once graceMs has passed. */
export function settleWithin<T>(p: Promise<T>, signal: AbortSignal, graceMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let grace: NodeJS.Timeout | undefined;
    const onAbort = () => {
      grace = setTimeout(() => reject(signal.reason), graceMs);
    };
    const done = () => {
      clearTimeout(grace);
      signal.removeEventListener('abort', onAbort);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => (done(), resolve(v)),
      (e) => (done(), reject(e)),
    );
  });
}

/** Waits between tries of recording a job's outcome while the database is unavailable. */
const RECORD_RETRY_MS = [250, 500, 1000, 2000, 5000];

/**
 * Runs write (the runner's record of a job's outcome) until it goes through: while it fails because
 * the database is unavailable (restart, failover, out of connections, lock timeout) it is tried
 * again with a growing wait, so an outcome is recorded once the database is back instead of the job
 * waiting for its lease to run out. Any other error, or giveUp aborted (the runner stops), rejects.
 * The lease fences the write: a run whose job was reclaimed meanwhile records nothing.
 */
export async function recordWhenBack<T>(write: () => Promise<T>, giveUp: AbortSignal, onWait?: (err: unknown) => void): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await write();
    } catch (err) {
      if (!isDatabaseUnavailable(err) || giveUp.aborted) throw err;
      if (i === 0) onWait?.(err);
      await sleep(RECORD_RETRY_MS[Math.min(i, RECORD_RETRY_MS.length - 1)], undefined, { signal: giveUp }).catch(() => undefined);
    }
  }
}
