import type { ServerRoute } from '@hapi/hapi';
import type { App } from '../../services/app.ts';

/** How long each dependency may take to answer /healthz. */
const CHECK_TIMEOUT_MS = 2000;

type Check = 'ok' | string;

async function bounded(what: string, work: () => Promise<unknown>): Promise<Check> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      work(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
      }),
    ]);
    return 'ok';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * GET /healthz (process up, database answers and takes writes, PostgreSQL's dedicated connections
 * (listen, capture_store) are up, storage answers, free space in data_dir,
 * data files writable, ingested captures' rows in the capture store: 200 or 503 naming the failing checks, JSON) and GET /metrics
 * (Prometheus text by prom-client). No login; only for clients in server.health_allow and
 * server.metrics_allow (default loopback and vpn.cidr): for systemd, monitoring and load balancers.
 */
export function healthRoutes(app: App): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/healthz',
      options: {
        auth: false,
        app: { vpn: 'health' },
        handler: async (_request, h) => {
          let database_write: Check = 'ok';
          const [database, storage, disk_space, data_files, disk_write, capture_rows] = await Promise.all([
            bounded('database', async () => {
              await app.db.ping();
              database_write = await app.health.databaseWrite();
            }),
            bounded('storage', () => app.storage.ping()),
            app.health.diskSpace(),
            app.health.dataFiles(),
            app.health.diskWrite(),
            app.health.captureRows.check(),
          ]);
          const checks: Record<string, Check> = { process: 'ok', database, database_write, ...app.health.connections(), storage, disk_space, data_files, disk_write, capture_rows };
          const failing = Object.keys(checks).filter((k) => checks[k] !== 'ok');
          const ok = failing.length === 0;
          const body = { status: ok ? 'ok' : 'unavailable', ...(ok ? {} : { failing }), checks, uptime_s: Math.round(process.uptime()) };
          return h.response(body).code(ok ? 200 : 503).header('cache-control', 'no-store');
        },
      },
    },
    {
      method: 'GET',
      path: '/metrics',
      options: {
        auth: false,
        app: { vpn: 'metrics' },
        handler: async (_request, h) =>
          h.response(await app.metrics.render()).type(app.metrics.contentType).header('cache-control', 'no-store'),
      },
    },
  ];
}
