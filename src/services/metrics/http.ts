import { Counter, Histogram, type Registry } from 'prom-client';

/** Upper bounds in seconds for request latencies. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** HTTP requests by route pattern (never the raw path, so the label set stays small), and rig reports. */
export class HttpMetrics {
  readonly #requests: Histogram<'method' | 'route' | 'status'>;
  readonly #reports: Counter;
  readonly #reportLatency: Histogram;

  constructor(registers: Registry[]) {
    this.#requests = new Histogram({
      name: 'rigd_http_request_duration_seconds',
      help: 'HTTP request latency by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.#reports = new Counter({ name: 'rigd_rig_reports_total', help: 'Rig reports stored by this process since it started.', registers });
    this.#reportLatency = new Histogram({
      name: 'rigd_rig_report_duration_seconds',
      help: 'Time from a rig report arriving to its answer, for reports stored (its group commit included).',
      buckets: LATENCY_BUCKETS,
      registers,
    });
  }

  /** One request answered. */
  request(method: string, route: string, status: number, seconds: number): void {
    this.#requests.observe({ method, route, status: String(status) }, seconds);
  }

  /** One rig report stored and answered 200. */
  report(seconds: number): void {
    this.#reports.inc();
    this.#reportLatency.observe(seconds);
  }
}
