import { Gauge, type Registry } from 'prom-client';
import { openIncidentTally } from '../../db/incidents.ts';
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
      const counts = new Map<string, number>(INCIDENT_KINDS.map((k) => [k, 0]));
      for (const [kind, n] of await openIncidentTally(reader)) counts.set(kind, n);
      for (const [kind, n] of counts) this.set({ kind }, n);
    },
  });
}
