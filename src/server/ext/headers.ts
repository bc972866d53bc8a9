import type { ResponseObject, ResponseToolkit, Request, Server } from '@hapi/hapi';
import { weakEtag } from '../../services/weak-etag.ts';
import { addResponseStep } from './lifecycle.ts';

export { weakEtag };

/** Sent on every response. */
const SECURITY_HEADERS: Record<string, string> = {
  'x-frame-options': 'SAMEORIGIN',
  'x-xss-protection': '0',
  'x-content-type-options': 'nosniff',
  'x-download-options': 'noopen',
  'x-permitted-cross-domain-policies': 'none',
  'referrer-policy': 'strict-origin-when-cross-origin',
};

const JSON_TYPE = 'application/json; charset=utf-8';

function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const opaque = etag.slice(2);
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === etag || tag === opaque || tag.replace(/^W\//, '') === opaque;
  });
}

/**
 * A JSON body serialised (and its ETag taken) before the request, as the hook below would answer an
 * object: same type, Vary, validators and 304.
 */
export function jsonBody(request: Request, h: ResponseToolkit, body: string | Buffer, etag: string): ResponseObject {
  const response = h.response(body).type(JSON_TYPE).header('vary', request.route.settings.app?.vary ?? 'Origin');
  response.header('etag', etag).header('cache-control', 'max-age=0, private, must-revalidate');
  if ((request.method === 'get' || request.method === 'head') && etagMatches(request.headers['if-none-match'] as string | undefined, etag)) response.code(304);
  return response;
}

function isJsonSource(response: ResponseObject): boolean {
  const source = response.source as unknown;
  if (response.variety !== 'plain' || source === null || typeof source !== 'object') return false;
  return !Buffer.isBuffer(source) && typeof (source as { pipe?: unknown }).pipe !== 'function';
}

function runtime(startedAt: bigint): string {
  return (Number(process.hrtime.bigint() - startedAt) / 1e9).toFixed(6);
}

/**
 * The seed's common headers, in one place. JSON answers are serialised here so that the
 * ETag is taken over the exact bytes sent; a GET whose If-None-Match matches gets 304.
 */
export function registerHeaders(server: Server): void {
  addResponseStep(server, (request, h, current) => {
    let response = current as ResponseObject;
    if (isJsonSource(response)) {
      const body = JSON.stringify(response.source);
      const next = h.response(body).code(response.statusCode).type(JSON_TYPE);
      for (const [name, value] of Object.entries(response.headers)) {
        if (name.toLowerCase() !== 'content-type') next.header(name, String(value));
      }
      next.header('vary', request.route.settings.app?.vary ?? 'Origin');
      if (response.statusCode === 200) {
        const etag = weakEtag(body);
        next.header('etag', etag);
        next.header('cache-control', 'max-age=0, private, must-revalidate');
        if ((request.method === 'get' || request.method === 'head') && etagMatches(request.headers['if-none-match'] as string | undefined, etag)) {
          next.code(304);
        }
      } else {
        next.header('cache-control', 'no-cache');
      }
      response = next;
    }
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.header(name, value);
    response.header('x-request-id', request.app.requestId);
    response.header('x-runtime', runtime(request.app.startedAt));
    return response;
  });
}
