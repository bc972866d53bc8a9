import Boom from '@hapi/boom';
import type { Request, ResponseToolkit, Server } from '@hapi/hapi';
import { DomainError, type ErrorDetail, type ErrorKind, Throttled, Unavailable } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { databaseFault, FaultEpisodes } from '../../db/faults.ts';
import { redactText } from '../../db/database-url.ts';
import { httpErrorPageHtml } from '../error-page.ts';
import { failure } from '../envelope.ts';

const STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unprocessable: 422,
  throttled: 429,
  unavailable: 503,
  insufficient_storage: 507,
};

const BOOM_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'too_many_requests',
  503: 'unavailable',
};

export interface HttpError {
  status: number;
  code: string;
  message: string;
  details: ErrorDetail[];
  headers: Record<string, string>;
}

/** The one mapping from anything thrown to what the client sees. Never leaks a stack. */
export function toHttpError(thrown: Boom.Boom, requestId: string): HttpError {
  // A database error that is a host fault (full disk, unwritable file) met outside the write path.
  const err: Boom.Boom | DomainError = databaseFault(thrown) ?? thrown;
  if (err instanceof DomainError) {
    const headers: Record<string, string> = {};
    if (err instanceof Throttled || err instanceof Unavailable) headers['retry-after'] = String(err.retryAfterS);
    return { status: STATUS[err.kind], code: err.code, message: err.message, details: err.details, headers };
  }
  const status = err.output.statusCode;
  if (status >= 500 && status !== 503) {
    return { status, code: 'internal_error', message: `internal error (request ${requestId})`, details: [], headers: {} };
  }
  let code = BOOM_CODES[status] ?? `http_${status}`;
  let message = String(err.output.payload.message ?? err.output.payload.error);
  if (status === 400 && /payload JSON format/i.test(message)) {
    code = 'invalid_json';
    message = 'the request body is not valid JSON';
  } else if (status === 413) {
    message = 'the request body is too large';
  } else if (status === 415) {
    message = 'unsupported Content-Type for this endpoint';
  } else if (status === 404 && message === 'Not Found') {
    message = 'no such resource';
  }
  const headers: Record<string, string> = {};
  const allow = err.output.headers['Allow'] ?? err.output.headers['allow'];
  if (allow) headers.allow = String(allow);
  return { status, code, message, details: [], headers };
}

/**
 * The route's error format; a path no route serves (hapi's notFound route) answers a browser,
 * which asks for text/html, with the HTML page and everyone else with JSON.
 */
function formatOf(request: Request): 'json' | 'text' | 'html' {
  const format = request.route.settings.app?.errorFormat;
  if (format) return format;
  // hapi's own notFound route has the method '_special' (not among the route method types).
  const unrouted = (request.route.method as string) === '_special';
  const browser = (request.method === 'get' || request.method === 'head') && /\btext\/html\b/.test(String(request.headers.accept ?? ''));
  return unrouted && browser ? 'html' : 'json';
}

function render(request: Request, h: ResponseToolkit, e: HttpError) {
  const format = formatOf(request);
  if (format === 'text') {
    return h.response(`${e.message}\n`).type('text/plain; charset=utf-8').code(e.status);
  }
  if (format === 'html') {
    return h.response(httpErrorPageHtml(e.status, e.message, request.path)).type('text/html; charset=utf-8').code(e.status);
  }
  return h.response(failure(e.code, e.message, e.details)).code(e.status);
}

/** Methods a route may serve, in the order an Allow header names them. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * What hapi's own routes (method '_special') leave vague, said plainly: a path that a route serves
 * with other methods is 405 with Allow (not 404), a path with broken percent-encoding says so, and
 * hapi's bare "Bad Request" (bytes after the body that are not HTTP) says what it means.
 */
function refine(server: Server, request: Request, e: HttpError): HttpError {
  const special = (request.route.method as string) === '_special';
  if (special && e.status === 404) {
    const serves = (m: (typeof METHODS)[number]) => {
      try {
        return server.match(m, request.path) !== null;
      } catch {
        return false; // a path hapi's router cannot take
      }
    };
    const allow = METHODS.filter((m) => serves(m === 'HEAD' ? 'GET' : m));
    if (allow.length === 0) return e;
    const method = request.method.toUpperCase();
    return { ...e, status: 405, code: 'method_not_allowed', message: `${method} is not allowed here; this path takes ${allow.join(', ')}`, headers: { ...e.headers, allow: allow.join(', ') } };
  }
  if (e.status === 400 && e.code === 'bad_request' && e.message === 'Bad Request') {
    return special
      ? { ...e, code: 'invalid_path', message: 'the request path has malformed percent-encoding' }
      : { ...e, code: 'malformed_request', message: 'the request is not well-formed HTTP (bytes after its body that are not a request)' };
  }
  return e;
}

/** Turns every error response into the route's error format (JSON by default). */
export function registerErrors(server: Server, log: Logger): void {
  // The database gone is one log line per outage (and one when it ends with more requests refused), not one per request.
  const outages = new FaultEpisodes();
  server.ext('onPreResponse', (request, h) => {
    const { response } = request;
    if (!Boom.isBoom(response)) return h.continue;
    const e = refine(server, request, toHttpError(response, request.app.requestId));
    if (e.status === 503 && (e.code === 'database_unavailable' || e.code === 'database_busy')) {
      const driver = response instanceof DomainError ? response.cause : response;
      const cause = driver instanceof Error ? redactText(driver.message.split('\n')[0] ?? '') : undefined;
      // The server out of connection slots is an episode of its own (its line says so), even when it
      // follows connections ended or refused.
      const full = (driver as { code?: unknown } | undefined)?.code === '53300' || /too many clients|remaining connection slots/.test(cause ?? '');
      if (outages.begins(`${e.code}${full ? ':no_slots' : ''}`)) {
        log.warn('database unavailable: requests answer 503 until it is back', { request_id: request.app.requestId, code: e.code, ...(cause ? { cause } : {}) });
      }
    } else if (e.status === 503 && (e.code === 'disk_full' || e.code === 'database_read_only' || e.code === 'disk_failing')) {
      log.warn('write refused', { request_id: request.app.requestId, method: request.method, path: request.path, code: e.code, error: e.message });
    } else if (e.status >= 500 && !(response instanceof DomainError)) {
      log.error('request failed', {
        request_id: request.app.requestId,
        method: request.method,
        path: request.path,
        error: response.message,
        stack: response.stack,
      });
    }
    const out = render(request, h, e);
    for (const [name, value] of Object.entries(e.headers)) out.header(name, value);
    return out;
  });
}
