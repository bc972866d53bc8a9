import { Op } from 'sequelize';
import type { Database } from '../db/index.ts';
import { CAPTURE_STATES } from '../db/models/capture.ts';
import { JOB_STATES } from '../db/models/job.ts';
import type { UploadState } from '../db/models/upload.ts';
import { family, Histogram } from './histogram.ts';
import { RIG_STATUSES } from './rig-status.ts';
import type { RigService } from './rigs.ts';

const UPLOAD_STATES: UploadState[] = ['reserved', 'uploaded', 'expired'];
const HTTP_BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const INGEST_BOUNDS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/**
 * What GET /metrics shows. HTTP latencies and rig reports are counted in this process (since start);
 * rigs, uploads, jobs and captures are read from the database when scraped, so they are right even
 * for work done by other processes. Ingest durations come from captures that finished (started_at to
 * finished_at), each counted once, read incrementally.
 */
export class Metrics {
  readonly http = new Histogram('rigd_http_request_duration_seconds', 'HTTP request latency by method, route and status.', HTTP_BOUNDS);
  readonly ingest = new Histogram('rigd_ingest_duration_seconds', 'Time from claiming a capture to its outcome, by outcome.', INGEST_BOUNDS);
  #reports = 0;
  #ingestCursor: { at: Date; ids: Set<number> } | null = null;

  constructor(
    private readonly db: Database,
    private readonly rigs: RigService,
  ) {}

  /** One rig report stored. */
  rigReport(): void {
    this.#reports += 1;
  }

  async #countBy(model: 'Upload' | 'Job' | 'Capture', states: readonly string[]): Promise<[Record<string, string>, number][]> {
    const m = this.db.models[model] as unknown as { count(o: object): Promise<{ state: string; count: number }[]> };
    const rows = await m.count({ group: ['state'] });
    const by = new Map(rows.map((r) => [r.state, Number(r.count)]));
    return states.map((s) => [{ state: s }, by.get(s) ?? 0]);
  }

  async #readIngestDurations(): Promise<void> {
    const { Capture } = this.db.models;
    const since = this.#ingestCursor;
    const rows = await Capture.findAll({
      attributes: ['id', 'state', 'started_at', 'finished_at'],
      where: {
        state: ['ingested', 'failed'],
        started_at: { [Op.ne]: null },
        finished_at: since ? { [Op.gte]: since.at } : { [Op.ne]: null },
      },
      order: [['finished_at', 'ASC']],
      raw: true,
    });
    for (const r of rows) {
      const finished = new Date(r.finished_at as Date);
      if (since && since.ids.has(r.id) && finished.getTime() === since.at.getTime()) continue;
      const seconds = (finished.getTime() - new Date(r.started_at as Date).getTime()) / 1000;
      this.ingest.observe(Math.max(0, seconds), { outcome: r.state });
      if (!this.#ingestCursor || finished.getTime() > this.#ingestCursor.at.getTime()) this.#ingestCursor = { at: finished, ids: new Set() };
      this.#ingestCursor.ids.add(r.id);
    }
  }

  /** The whole exposition, Prometheus text format 0.0.4. */
  async render(): Promise<string> {
    const [rigs, uploads, jobs, captures] = await Promise.all([
      this.rigs.list(),
      this.#countBy('Upload', UPLOAD_STATES),
      this.#countBy('Job', JOB_STATES),
      this.#countBy('Capture', CAPTURE_STATES),
      this.#readIngestDurations(),
    ]);
    const byStatus = RIG_STATUSES.map((s) => [{ status: s }, rigs.filter((r) => r.status === s).length] as [Record<string, string>, number]);
    const depth = jobs.filter(([l]) => l.state === 'queued' || l.state === 'running').reduce((n, [, v]) => n + v, 0);
    return [
      family('rigd_rig_reports_total', 'counter', 'Rig reports stored by this process since it started.', [[{}, this.#reports]]),
      family('rigd_rigs', 'gauge', 'Rigs by status (computed when scraped).', byStatus),
      family('rigd_uploads', 'gauge', 'Uploads by state.', uploads),
      family('rigd_jobs', 'gauge', 'Ingest queue jobs by state.', jobs),
      family('rigd_queue_depth', 'gauge', 'Jobs queued or running.', [[{}, depth]]),
      family('rigd_captures', 'gauge', 'Captures by state.', captures),
      this.ingest.render(),
      this.http.render(),
    ].join('');
  }
}
