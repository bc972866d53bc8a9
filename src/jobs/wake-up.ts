/**
 * In-process wake-up: an enqueue that commits in this process wakes the runners of this process
 * at once instead of at their next poll. (Jobs queued by another process are found by polling.)
 */
type Listener = () => void;

const listeners = new Set<Listener>();

export function onJobEnqueued(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function notifyJobEnqueued(): void {
  for (const listener of listeners) listener();
}
