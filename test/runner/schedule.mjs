// Which test file starts next: up to `jobs` at once, in the order given, a file that runs alone only
// when nothing else runs (and nothing starts beside it), two files sharing a resource never together.
// A file that cannot start yet keeps its place: the next free slot goes to it first.

/** Whether item may start beside the running ones. */
function fits(item, running) {
  if (running.size === 0) return true;
  if (item.alone) return false;
  for (const r of running) {
    if (r.alone) return false;
    if (item.resources.some((x) => r.resources.includes(x))) return false;
  }
  return true;
}

/**
 * Runs run(item) for every item, at most jobs at once; resolves when all have ended (run's promise
 * never rejects: it reports its own failures).
 */
export function schedule(items, jobs, run) {
  const pending = [...items];
  const running = new Set();
  return new Promise((resolve) => {
    const pump = () => {
      if (pending.length === 0 && running.size === 0) return resolve();
      for (let i = 0; i < pending.length && running.size < jobs; ) {
        const item = pending[i];
        if (!fits(item, running)) {
          // A file that runs alone waits for the running ones to end; nothing overtakes it.
          if (item.alone) break;
          i++;
          continue;
        }
        pending.splice(i, 1);
        running.add(item);
        void run(item).then(() => {
          running.delete(item);
          pump();
        });
      }
    };
    pump();
  });
}

/**
 * The order files are offered to the workers: the files that share the machine first, in their
 * order; the files that run alone last, one after another, so that none waits behind a file that
 * needs the machine to itself while the workers could share it.
 */
export function startOrder(items) {
  return [...items.filter((it) => !it.alone), ...items.filter((it) => it.alone)];
}
