import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { captureTally } from '../../db/captures.ts';
import { jobTally } from '../../db/job-tally.ts';
import type { Reader } from '../../db/reader.ts';
import { CAPTURE_STATES } from '../../db/models/capture-state.ts';
import { JOB_STATES } from '../../db/models/job.ts';
import { CAPTURE_JOB } from '../../ingest/capture-job.ts';
import type { RunOutcome } from '../../jobs/runner.ts';
import { sharedRead } from './shared-read.ts';

const SECONDS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/** Jobs by state, and capture jobs alone by state ("capture:queued"): the ingest queue's depth. */
async function jobCounts(reader: Reader): Promise<Map<string, number>> {
  const tally = await jobTally(reader, CAPTURE_JOB);
  return new Map([...tally].flatMap(([state, t]) => [[state, t.n] as const, [`capture:${state}`, t.ofKind] as const]));
}

/**
 * The ingest queue and its jobs. Depth and states are read from the database when scraped (jobs
 * queued by another process count); run times and failures are those of this process's runner.
 */
export class IngestMetrics {
  readonly #duration: Histogram<'kind' | 'outcome'>;
  readonly #failures: Counter<'kind' | 'outcome'>;

  constructor(registers: Registry[], reader: Reader) {
    const jobStates = sharedRead(() => jobCounts(reader));
    new Gauge({
      name: 'rigd_jobs',
      help: 'Queue jobs by state (queued, running, done, failed), read when scraped.',
      labelNames: ['state'],
      registers,
      async collect() {
        const by = await jobStates();
        for (const state of JOB_STATES) this.set({ state }, by.get(state) ?? 0);
      },
    });
    new Gauge({
      name: 'rigd_ingest_queue_depth',
      help: 'Capture jobs waiting or running in the ingest queue (not notifications), read when scraped.',
      registers,
      async collect() {
        const by = await jobStates();
        this.set((by.get('capture:queued') ?? 0) + (by.get('capture:running') ?? 0));
      },
    });
    new Gauge({
      name: 'rigd_captures',
      help: 'Captures by state (uploaded, queued, ingesting, ingested, failed), derived from their jobs.',
      labelNames: ['state'],
      registers,
      async collect() {
        // A capture's state is its job's, read through the join.
        const by = await captureTally(reader);
        for (const state of CAPTURE_STATES) this.set({ state }, by.get(state) ?? 0);
      },
    });
    this.#duration = new Histogram({
      name: 'rigd_job_duration_seconds',
      help: 'Run time of each job attempt in this process, by job kind and outcome (done, retry, failed, released, lost).',
      labelNames: ['kind', 'outcome'],
      buckets: SECONDS,
      registers,
    });
    this.#failures = new Counter({
      name: 'rigd_job_failures_total',
      help: 'Job attempts that failed in this process, by job kind and outcome: retry (queued again) or failed (given up).',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    // Present from the start, so rate() and alerts see a zero before the first failure.
    for (const outcome of ['retry', 'failed']) this.#failures.inc({ kind: CAPTURE_JOB, outcome }, 0);
  }

  /** The runner's hook: one job attempt ended. */
  readonly onOutcome = (kind: string, outcome: RunOutcome, seconds: number): void => {
    this.#duration.observe({ kind, outcome }, seconds);
    if (outcome === 'retry' || outcome === 'failed') this.#failures.inc({ kind, outcome });
  };
}
