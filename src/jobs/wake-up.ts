/**
 * Wake-ups: an enqueue that commits in this process wakes the runners of this process at once
 * instead of at their next poll. Across processes (other nodes, `rigd ingest`), on PostgreSQL, the
 * enqueue also notifies JOBS_CHANNEL in its transaction and every runner listens to it
 * (src/db/notify.ts); polling stays as the fallback, and is all there is on SQLite.
 */

/** The notification channel an enqueue sends on, with the job's kind as payload. */
export const JOBS_CHANNEL = 'rigd_jobs';
type Listener = () => void;

const listeners = new Set<Listener>();

export function onJobEnqueued(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function notifyJobEnqueued(): void {
  for (const listener of listeners) listener();
}
