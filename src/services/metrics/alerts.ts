import { Gauge, type Registry } from 'prom-client';
import type { Reader } from '../../db/reader.ts';
import { INCIDENT_KINDS } from '../alerts/event.ts';

/** Open incidents by kind, counted from the incidents table when scraped (every node shows the same). */
export function registerAlertMetrics(registers: Registry[], reader: Reader): void {
  new Gauge({
    name: 'rigd_alerts_open',
    help: 'Open incidents by kind (rig_offline, fleet_outage, capture_failed, ...), counted when scraped.',
    labelNames: ['kind'],
    registers,
    async collect() {
      const rows = await reader.all<{ kind: string; n: number }>('SELECT kind, COUNT(*) AS n FROM incidents WHERE resolved_at IS NULL GROUP BY kind');
      const counts = new Map<string, number>(INCIDENT_KINDS.map((k) => [k, 0]));
      for (const r of rows) counts.set(r.kind, Number(r.n));
      for (const [kind, n] of counts) this.set({ kind }, n);
    },
  });
}
