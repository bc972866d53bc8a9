import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Histogram, type Registry } from 'prom-client';

/** How often the event loop is sampled, ms (a timer of this period; its lateness is the delay). */
const RESOLUTION_MS = 10;
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * rigd_event_loop_delay_seconds: how late a timer of RESOLUTION_MS ran, sampled by
 * perf_hooks.monitorEventLoopDelay. Every request, timer and database callback of the process waits
 * this long before it runs, so its tail is the floor of every answer's tail. The native histogram is
 * drained into the Prometheus one at each scrape (no timer of rigd's own; the sampling timer
 * is unreferenced and never keeps the process alive).
 */
export class EventLoopMetrics {
  readonly #monitor: IntervalHistogram;
  readonly #delay: Histogram;

  constructor(registers: Registry[]) {
    this.#monitor = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    this.#monitor.enable();
    const drain = () => this.drain();
    this.#delay = new Histogram({
      name: 'rigd_event_loop_delay_seconds',
      help: `How late the event loop ran a ${RESOLUTION_MS} ms timer (monitorEventLoopDelay), one sample per period.`,
      buckets: BUCKETS,
      registers,
      collect() {
        drain();
      },
    });
  }

  /**
   * Moves the samples taken since the last call into the Prometheus histogram: the native histogram
   * keeps percentiles, so each step between two percentiles becomes that many samples at the upper
   * value (HDR precision, a few percent).
   */
  drain(): void {
    const m = this.#monitor;
    const count = m.count;
    if (count === 0) return;
    let seen = 0;
    for (const [percentile, ns] of m.percentiles) {
      const upTo = Math.round((percentile / 100) * count);
      const seconds = Math.max(0, ns / 1e6 - RESOLUTION_MS) / 1000;
      for (; seen < upTo; seen++) this.#delay.observe(seconds);
    }
    m.reset();
  }
}
