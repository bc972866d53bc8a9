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
 * The order files are offered to the workers: the files that run alone last, one after another; the
 * others before them, and among those first the files holding a named resource that more than two
 * files hold (the package builds: one at a time), the longest chain first, so that their chain runs
 * beside the rest instead of after it. Network subnets do not count as chains.
 */
export function startOrder(items) {
  const holders = new Map();
  for (const it of items) for (const r of it.resources) if (!r.startsWith('net:')) holders.set(r, (holders.get(r) ?? 0) + 1);
  const chain = (it) => Math.max(0, ...it.resources.map((r) => holders.get(r) ?? 0));
  const beside = items.filter((it) => !it.alone);
  const chained = beside.filter((it) => chain(it) > 2).sort((a, b) => chain(b) - chain(a));
  return [...chained, ...beside.filter((it) => chain(it) <= 2), ...items.filter((it) => it.alone)];
}
