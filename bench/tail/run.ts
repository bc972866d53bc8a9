/** One load run's figures, as bench/tail/load.ts prints them (one JSON line). */
export interface LoadRun {
  /** Answers per second over the whole run. */
  rps: number;
  p50: number;
  p99: number;
  max: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** The load generator's own CPU over the run (user + system, ms): its share of the machine. */
  clientCpuMs?: number;
}

/** The figures of one autocannon result. */
export function loadRun(result: import('autocannon').Result, clientCpuMs?: number): LoadRun {
  return {
    ...(clientCpuMs === undefined ? {} : { clientCpuMs }),
    // Answers per second over the whole run (a partial last second would skew requests.average).
    rps: (result['2xx'] + result.non2xx) / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}
