import type { Request, Server } from '@hapi/hapi';
import type { Logger } from '../../log.ts';
import type { AppMetrics } from '../../services/metrics/contract.ts';
import { clientAddress, parseCidrs } from '../client-address.ts';

/** The route that stores a rig report (counted, with its latency, for /metrics when it answers 200). */
const REPORT_ROUTE = '/api/v1/rigs/{id}';

function statusOf(request: Request): number {
  const response = request.response;
  if (!response) return 0;
  // A Boom error that never became a response (client gone) still has its status in output.
  if ('isBoom' in response && response.isBoom) return response.output.statusCode;
  return 'statusCode' in response ? Number(response.statusCode) : 0;
}

/**
 * One JSON line per request when its response ends (journald keeps stdout): method, path, status,
 * duration, request id, client address. Feeds the HTTP latency histogram of /metrics, labelled by
 * route pattern (never the raw path, so the label set stays small).
 */
export function registerRequestLog(server: Server, log: Logger, metrics: AppMetrics['http'], trustedProxies: readonly string[]): void {
  const trusted = parseCidrs(trustedProxies);
  server.events.on('response', (request) => {
    const started = request.app.startedAt;
    const seconds = started === undefined ? 0 : Number(process.hrtime.bigint() - started) / 1e9;
    const status = statusOf(request);
    const route = request.route?.path ?? '(none)';
    const method = request.method.toUpperCase();
    metrics.request(method, request.route?.settings ? route : '(unrouted)', status, seconds);
    if (method === 'PUT' && route === REPORT_ROUTE && status === 200) metrics.report(seconds);
    log.info('request', {
      request_id: request.app.requestId,
      method,
      path: request.path,
      status,
      duration_ms: Math.round(seconds * 1e6) / 1e3,
      client: clientAddress(request, trusted)?.toString() ?? request.info.remoteAddress,
    });
  });
}
