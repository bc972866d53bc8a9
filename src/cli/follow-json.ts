import type { Differ } from './watch-events.ts';
import { jsonText } from './json-text.ts';

export interface FollowOptions<T, E> {
  /** Reads the current list. */
  load: () => Promise<T[]>;
  diff: Differ<T, E>;
  intervalMs: number;
  /** Writes one whole line (tests capture it); default: stdout. */
  write?: (line: string) => void;
  /** Ends the loop when aborted (default: on SIGINT or SIGTERM, and when stdout is closed). */
  signal?: AbortSignal;
}

/** Aborts on SIGINT, SIGTERM or a closed stdout (`| head -1`); `release` removes the listeners. */
function stopOnSignals(): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const stop = () => controller.abort();
  const onError = (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' ? stop() : undefined);
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.stdout.on('error', onError);
  return {
    signal: controller.signal,
    release: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      process.stdout.off('error', onError);
    },
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}

/**
 * `--watch --json`: prints change events as NDJSON (one JSON object per line, each line one write)
 * until stopped; the first poll prints one `*_appeared` per existing item. A failed poll is said on
 * stderr and the next poll diffs against the last good snapshot. Resolves (exit 0) when stopped:
 * a line is never cut, since it is written whole between polls.
 */
export async function followJson<T, E>(opts: FollowOptions<T, E>): Promise<void> {
  const own = opts.signal ? undefined : stopOnSignals();
  const signal = opts.signal ?? own!.signal;
  const write = opts.write ?? ((line: string) => void process.stdout.write(line));
  let last: T[] | undefined;
  try {
    while (!signal.aborted) {
      try {
        const current = await opts.load();
        if (signal.aborted) break;
        const events = opts.diff(last, current, new Date());
        for (const event of events) write(`${jsonText(event)}\n`);
        last = current;
      } catch (err) {
        process.stderr.write(`rigd: refresh failed: ${err instanceof Error ? err.message : String(err)}\n`);
      }
      await sleep(opts.intervalMs, signal);
    }
  } finally {
    own?.release();
  }
}
