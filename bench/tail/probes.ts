// Where a report's time goes while a scenario runs: deltas of rigd's own /metrics histograms
// (event-loop delay, COMMIT time, group-commit batch size and time), GC pauses (perf_hooks), and
// the libuv threadpool's queueing (a tiny fs.stat every 20 ms, timed: it waits behind sqlite3,
// file I/O, bcrypt and crypto work on the same pool).
import { stat } from 'node:fs/promises';
import { PerformanceObserver } from 'node:perf_hooks';

/** Cumulative bucket counts of one histogram (summed over label sets), by upper bound. */
type Buckets = Map<number, number>;

export function histogram(exposition: string, name: string): { buckets: Buckets; sum: number; count: number } {
  const buckets: Buckets = new Map();
  let sum = 0;
  let count = 0;
  for (const line of exposition.split('\n')) {
    if (line.startsWith(`${name}_bucket{`)) {
      const le = /le="([^"]+)"/.exec(line)?.[1];
      const bound = le === '+Inf' ? Infinity : Number(le);
      buckets.set(bound, (buckets.get(bound) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
    } else if (line.startsWith(`${name}_sum`)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    else if (line.startsWith(`${name}_count`)) count += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return { buckets, sum, count };
}

export interface HistogramDelta {
  count: number;
  mean: number;
  /** Upper bound of the bucket holding the 99th percentile (Infinity: above the last bound). */
  p99: number;
  max: number;
}

/** What happened to histogram `name` between two expositions. */
export function delta(before: string, after: string, name: string): HistogramDelta {
  const a = histogram(before, name);
  const b = histogram(after, name);
  const count = b.count - a.count;
  const bounds = [...b.buckets.keys()].sort((x, y) => x - y);
  const at = (q: number) => bounds.find((le) => (b.buckets.get(le) ?? 0) - (a.buckets.get(le) ?? 0) >= q * count) ?? Infinity;
  // The highest non-empty bucket bounds the largest sample.
  let max = 0;
  let prev = 0;
  for (const le of bounds) {
    const c = (b.buckets.get(le) ?? 0) - (a.buckets.get(le) ?? 0);
    if (c > prev) max = le;
    prev = c;
  }
  return { count, mean: count ? (b.sum - a.sum) / count : 0, p99: count ? at(0.99) : 0, max };
}

const quantile = (xs: number[], q: number) => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

/** GC pauses and threadpool round trips of this process, from start() to stop(). */
export class ProcessProbe {
  #gc: number[] = [];
  #pool: number[] = [];
  #observer: PerformanceObserver | null = null;
  #timer: NodeJS.Timeout | null = null;

  constructor(private readonly file: string) {}

  start(): void {
    this.#gc = [];
    this.#pool = [];
    this.#observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) this.#gc.push(e.duration);
    });
    this.#observer.observe({ entryTypes: ['gc'] });
    let inFlight = false;
    this.#timer = setInterval(() => {
      if (inFlight) return;
      inFlight = true;
      const t0 = performance.now();
      void stat(this.file).finally(() => {
        this.#pool.push(performance.now() - t0);
        inFlight = false;
      });
    }, 20);
  }

  stop(): { gcCount: number; gcTotalMs: number; gcMaxMs: number; poolP50Ms: number; poolP99Ms: number; poolMaxMs: number } {
    this.#observer?.disconnect();
    if (this.#timer) clearInterval(this.#timer);
    return {
      gcCount: this.#gc.length,
      gcTotalMs: this.#gc.reduce((a, b) => a + b, 0),
      gcMaxMs: Math.max(0, ...this.#gc),
      poolP50Ms: quantile(this.#pool, 0.5),
      poolP99Ms: quantile(this.#pool, 0.99),
      poolMaxMs: Math.max(0, ...this.#pool),
    };
  }
}
