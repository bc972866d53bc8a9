// What the PostgreSQL fault tests watch while they inject a fault: a steady stream of rig reports
// (each with a tag of its own in software_version, so every acknowledged one can be found exactly
// once afterwards) and /healthz sampled every 250 ms (to show it told the truth during the fault).
import type { Cluster, ClusterNode } from './cluster.ts';
import { http } from './http.ts';

export interface ReportAnswer {
  tag: string;
  rig: string;
  node: string;
  status: number;
  type: string;
  body: string;
  /** The Retry-After header, if any. */
  retryAfter: string | undefined;
  /** When the answer came back (ms since the epoch). */
  at: number;
}

/** PUT /api/v1/rigs/:id from the rigs' namespace to `nodes` in turn, `perBatch` at a time, until stop(). */
export class ReportStream {
  readonly answers: ReportAnswer[] = [];
  #seq = 0;
  #running = true;
  readonly done: Promise<void>;

  constructor(
    private readonly c: Cluster,
    private readonly nodes: ClusterNode[],
    private readonly opts: { prefix: string; rigs: number; perBatch?: number; timeoutMs?: number },
  ) {
    this.done = this.#loop();
  }

  async #loop(): Promise<void> {
    let turn = 0;
    while (this.#running) {
      const node = this.nodes[turn++ % this.nodes.length]!;
      const batch = Array.from({ length: this.opts.perBatch ?? 8 }, () => {
        const n = ++this.#seq;
        return { tag: `${this.opts.prefix}-${n}`, rig: `${this.opts.prefix}-rig${n % this.opts.rigs}` };
      });
      const answers = await this.c.net.requestAll(
        'rig',
        batch.map(({ tag, rig }) => ({
          url: `${node.rigUrl}/api/v1/rigs/${rig}`,
          method: 'PUT',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `rig_serial=SN-${rig}&gpsd_latitude=47.37&gpsd_longitude=8.54&local_ip=192.168.8.20&software_version=${tag}&git_branch=main`,
          timeoutMs: this.opts.timeoutMs ?? 30_000,
        })),
      );
      const at = Date.now();
      answers.forEach((r, i) =>
        this.answers.push({ ...batch[i]!, node: node.id, status: r.status, type: String(r.headers['content-type'] ?? ''), body: r.body, retryAfter: r.headers['retry-after'] as string | undefined, at }),
      );
    }
  }

  acknowledged(): ReportAnswer[] {
    return this.answers.filter((a) => a.status === 200 && a.body === 'Ok');
  }

  async stop(): Promise<void> {
    this.#running = false;
    await this.done;
  }
}

export interface HealthSample {
  at: number;
  node: string;
  status: number;
  checks: Record<string, string>;
}

/** GET /healthz on each node every 250 ms until stop(). */
export class HealthSampler {
  readonly samples: HealthSample[] = [];
  #running = true;
  readonly done: Promise<void>;

  constructor(private readonly nodes: ClusterNode[]) {
    this.done = this.#loop();
  }

  async #loop(): Promise<void> {
    while (this.#running) {
      await Promise.all(
        this.nodes.filter((n) => n.running()).map(async (n) => {
          const res = await http(`${n.url}/healthz`).catch(() => null);
          if (!res) return;
          let checks: Record<string, string> = {};
          try {
            checks = res.json().checks ?? {};
          } catch {
            // not JSON: kept as no checks
          }
          this.samples.push({ at: Date.now(), node: n.id, status: res.status, checks });
        }),
      );
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  async stop(): Promise<void> {
    this.#running = false;
    await this.done;
  }
}

/** Counts by status, e.g. { 200: 40, 503: 12 }. */
export function statusCounts(answers: { status: number }[]): Record<number, number> {
  return answers.reduce<Record<number, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});
}

/** Tags stored in rig_reports other than exactly once: the acknowledged ones missing, and any stored twice. */
export async function reportsNotOnce(c: Cluster, acknowledged: ReportAnswer[], prefix: string): Promise<{ missing: string[]; twice: string[] }> {
  const rows = await c.query<{ version: string; n: number }>('SELECT version, count(*)::int AS n FROM rig_reports WHERE version LIKE $1 GROUP BY version', [`${prefix}-%`]);
  const stored = new Map(rows.map((r) => [r.version, Number(r.n)]));
  return {
    missing: acknowledged.filter((a) => stored.get(a.tag) !== 1).map((a) => a.tag),
    twice: rows.filter((r) => Number(r.n) > 1).map((r) => r.version),
  };
}
