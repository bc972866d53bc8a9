import { Gauge, type Registry } from 'prom-client';
import type { Config } from '../../config/schema.ts';
import type { Reader } from '../../db/reader.ts';
import { rigRhythms } from '../../db/rigs/listing.ts';
import { rhythmOf } from '../rigs/view.ts';
import { RIG_STATUSES, rigStatus } from '../rigs/status.ts';

/** Rigs by status, computed from the rigs table when scraped (right even for reports stored by another process). */
export function registerFleetMetrics(registers: Registry[], reader: Reader, config: Pick<Config, 'rigs' | 'alerts'>): void {
  new Gauge({
    name: 'rigd_rigs',
    help: 'Rigs by status (online, stale, offline: each by its own rhythm), computed when scraped.',
    labelNames: ['status'],
    registers,
    async collect() {
      const rows = await rigRhythms(reader);
      const now = new Date();
      const counts = new Map<string, number>(RIG_STATUSES.map((s) => [s, 0]));
      for (const r of rows) {
        const status = rigStatus(new Date(r.last_seen_at), now, config, rhythmOf(r));
        counts.set(status, (counts.get(status) ?? 0) + 1);
      }
      for (const [status, n] of counts) this.set({ status }, n);
    },
  });
}
