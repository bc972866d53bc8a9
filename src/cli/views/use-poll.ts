import { useEffect, useState } from 'react';

export interface Polled<T> {
  data?: T;
  /** The last load's failure (the previous data stays on screen). */
  error?: Error;
  /** When the last load finished. */
  at?: Date;
}

/**
 * Calls `load` now and then `intervalMs` after each load ends (never two at once), until unmount.
 * Returns the latest result; a failed load keeps the previous data and reports the error.
 */
export function usePoll<T>(load: () => Promise<T>, intervalMs: number): Polled<T> {
  const [state, setState] = useState<Polled<T>>({});
  useEffect(() => {
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    const tick = async () => {
      try {
        const data = await load();
        if (!stopped) setState({ data, at: new Date() });
      } catch (err) {
        if (!stopped) setState((prev) => ({ ...prev, error: err instanceof Error ? err : new Error(String(err)), at: new Date() }));
      }
      if (!stopped) timer = setTimeout(() => void tick(), intervalMs);
    };
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [load, intervalMs]);
  return state;
}
