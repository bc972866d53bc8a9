import type { Request, Server } from '@hapi/hapi';
import { pino } from 'pino';
import type { Logger } from '../../log.ts';
import { addressText } from '../client-address.ts';
import { ReportSummary } from '../../log/report-summary.ts';
import type { AppMetrics } from '../../services/metrics/contract.ts';

/** Probes polled by Prometheus, doctor and balancers: their request lines are at debug. */
const POLLED = new Set(['/healthz', '/metrics']);

/** The route that stores a rig report (counted, with its latency, for /metrics when it answers 200). */
const REPORT_ROUTE = '/api/v1/rigs/{id}';

function statusOf(request: Request): number {
  const response = request.response;
  if (!response) return 0;
  // A Boom error that never became a response (client gone) still has its status in output.
  if ('isBoom' in response && response.isBoom) return response.output.statusCode;
  return 'statusCode' in response ? Number(response.statusCode) : 0;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype;
}

/** At debug level the request line also shows what came in (secrets redacted by the logger). */
function details(request: Request): Record<string, unknown> {
  const response = request.response;
  const headers = response && 'headers' in response ? response.headers : {};
  const payload = request.payload;
  const source = response && 'source' in response ? response.source : undefined;
  return {
    headers: request.headers,
    query: request.query,
    ...(isPlainObject(payload) ? { payload } : {}),
    ...(headers['set-cookie'] ? { response_headers: { 'set-cookie': headers['set-cookie'] } } : {}),
    ...(isPlainObject(source) ? { response: source } : {}),
  };
}

export interface RequestLogOptions {
  /** log.reports: summary (answered reports at debug, counted in a summary line) or each. */
  reports: 'summary' | 'each';
  /** log.summary_interval_s */
  summaryIntervalS: number;
  /** log.slow_request_ms: slower requests are at info whatever their route. */
  slowMs: number;
}

/**
 * Routes log through `request.logger` (and `server.logger`): the server's pino logger itself, shared
 * by every request, since every line logged while serving a request carries its `request_id`
 * anyway (src/log/request-scope.ts); no child logger or extension per request. rigd writes one line
 * per request when its response ends (journald keeps stdout): method, path, status, duration,
 * request id, client address. At debug, not info: /healthz and /metrics polls unless they fail, and
 * answered rig reports (log.reports summary: counted instead, src/log/report-summary.ts); a request
 * slower than log.slow_request_ms is at info whatever it is. A line below the logger's level is not
 * even built. Feeds the HTTP latency histogram of /metrics, labelled by route pattern (never the raw
 * path, so the label set stays small).
 */
export function registerRequestLog(server: Server, log: Logger, metrics: AppMetrics['http'], options: RequestLogOptions): void {
  const logger = log.pino ?? pino({ level: 'silent' });
  server.decorate('server', 'logger', logger);
  // A value, not a function: set once on hapi's Request prototype.
  server.decorate('request', 'logger', logger as never);
  const debug = log.pino?.isLevelEnabled('debug') ?? false;
  const summary = options.reports === 'summary' ? new ReportSummary(log, options.summaryIntervalS * 1000) : null;
  if (summary) {
    server.ext('onPreStart', () => summary.start());
    server.ext('onPostStop', () => summary.stop());
  }
  const slowSeconds = options.slowMs / 1000;
  server.events.on('response', (request) => {
    const started = request.app.startedAt;
    const seconds = started === undefined ? 0 : Number(process.hrtime.bigint() - started) / 1e9;
    const status = statusOf(request);
    const route = request.route?.path ?? '(none)';
    const method = request.method;
    const report = method === 'put' && route === REPORT_ROUTE;
    metrics.request(method.toUpperCase(), request.route?.settings ? route : '(unrouted)', status, seconds);
    if (report && status === 200) metrics.report(seconds);
    if (report) summary?.record(status, seconds);
    const slow = seconds > slowSeconds;
    // Polls of a healthy gateway and answered reports are noise at info; a failing probe (503), a
    // refused or failed report and anything slow are not.
    const quiet = !slow && status > 0 && ((POLLED.has(route) && status < 500) || (summary !== null && report && status < 300));
    if (quiet && !debug) return;
    log[quiet ? 'debug' : 'info']('request', {
      request_id: request.app.requestId,
      method: method.toUpperCase(),
      path: request.path,
      status,
      duration_ms: Math.round(seconds * 1e6) / 1e3,
      client: request.app.client ? addressText(request.app.client) : request.info.remoteAddress,
      ...(slow ? { slow: true } : {}),
      ...(debug ? details(request) : {}),
    });
  });
}
