import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Config } from '../../config/schema.ts';
import type { Database } from '../../db/index.ts';
import { registerAlertMetrics } from './alerts.ts';
import type { AppMetrics } from './contract.ts';
import { registerDiskMetrics } from './disk.ts';
import { EventLoopMetrics } from './event-loop.ts';
import { registerFleetMetrics } from './fleet.ts';
import { HttpMetrics } from './http.ts';
import { IngestMetrics } from './ingest.ts';
import { LoginMetrics } from './logins.ts';
import { registerUploadMetrics } from './uploads.ts';
import { WriteMetrics } from './writes.ts';

/**
 * prom-client's default gauges whose names end in "_total" without being counters (promtool's lint
 * refuses them); each is the sum over the labelled gauge of the same name without the suffix.
 */
const NOT_COUNTERS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/**
 * What GET /metrics shows: a registry of this app's own (never prom-client's global one, so several
 * apps in one process keep apart), with prom-client's process metrics (CPU, memory, event loop lag,
 * GC, handles) and rigd's. Counters and histograms count what this process did since it started;
 * gauges of stored things (rigs, uploads, jobs, captures) and disk space are read when scraped.
 */
export class Metrics implements AppMetrics {
  readonly registry = new Registry();
  readonly http: HttpMetrics;
  readonly logins: LoginMetrics;
  readonly writes: WriteMetrics;
  readonly ingest: IngestMetrics;
  readonly eventLoop: EventLoopMetrics;

  constructor(db: Database, config: Pick<Config, 'rigs' | 'alerts' | 'data_dir'>) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    for (const name of NOT_COUNTERS) this.registry.removeSingleMetric(name);
    this.http = new HttpMetrics(registers);
    this.logins = new LoginMetrics(registers);
    this.writes = new WriteMetrics(registers);
    this.eventLoop = new EventLoopMetrics(registers);
    this.ingest = new IngestMetrics(registers, db.reader);
    registerFleetMetrics(registers, db.reader, config);
    registerUploadMetrics(registers, db.reader);
    registerAlertMetrics(registers, db.reader);
    registerDiskMetrics(registers, config.data_dir);
    db.writes.observe(this.writes.observer);
  }

  /**
   * Every series carries `instance`: this node's instance id, so the nodes of one service keep
   * apart (Prometheus keeps it with honor_labels: true).
   */
  setInstance(id: string): void {
    this.registry.setDefaultLabels({ instance: id });
  }

  /** The Content-Type of render()'s text (Prometheus text format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The whole exposition. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}
