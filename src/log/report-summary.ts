/**
 * The rig reports' summary line. A busy gateway answers thousands of reports a minute; one info
 * line per report would be most of its log (and of its CPU). Each report's answer is counted here
 * instead, and once per interval (log.summary_interval_s) one info line says how many were answered
 * by class (2xx, 4xx, 5xx; `aborted`: the client went away first) with their p50 and p99 latency:
 *   {"level":"info","msg":"reports","window_s":60,"2xx":41234,"4xx":0,"5xx":0,"p50_ms":3.1,"p99_ms":19.7}
 * A window without reports writes no line. Latencies go into Node's own histogram (perf_hooks), in µs.
 */
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import type { Logger } from '../log.ts';

export class ReportSummary {
  private readonly latency: RecordableHistogram = createHistogram();
  private ok = 0;
  private refused = 0;
  private failed = 0;
  private aborted = 0;
  private since = Date.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: Logger,
    private readonly intervalMs: number,
  ) {}

  /** One report answered with `status` (0: no answer, the client went away) after `seconds`. */
  record(status: number, seconds: number): void {
    if (status === 0) this.aborted++;
    else if (status < 400) this.ok++;
    else if (status < 500) this.refused++;
    else this.failed++;
    this.latency.record(Math.max(1, Math.round(seconds * 1e6)));
  }

  /** Writes a line every interval from now on (the timer never keeps the process alive). */
  start(): void {
    this.since = Date.now();
    this.timer ??= setInterval(() => this.flush(), this.intervalMs).unref();
  }

  /** Stops the timer and writes what the last window counted. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.flush();
  }

  /** The line for the window so far (when it counted any report), then a new window. */
  flush(): void {
    const now = Date.now();
    const total = this.ok + this.refused + this.failed + this.aborted;
    if (total > 0) {
      const ms = (us: number) => Math.round(us) / 1e3;
      this.log.info('reports', {
        window_s: Math.round((now - this.since) / 100) / 10,
        '2xx': this.ok,
        '4xx': this.refused,
        '5xx': this.failed,
        ...(this.aborted ? { aborted: this.aborted } : {}),
        p50_ms: ms(this.latency.percentile(50)),
        p99_ms: ms(this.latency.percentile(99)),
      });
    }
    this.ok = this.refused = this.failed = this.aborted = 0;
    this.latency.reset();
    this.since = now;
  }
}
