import Boom from '@hapi/boom';
import type { ResponseObject, ResponseToolkit, Request, RouteOptionsSecure, Server } from '@hapi/hapi';
import { weakEtag } from '../../services/weak-etag.ts';
import { contentSecurityPolicy } from '../content-security-policy.ts';
import { EXT } from './names.ts';

export { weakEtag };

/**
 * The seed's security headers that hapi sends itself (`routes.security`, on every response): no
 * HSTS (rigs speak plain HTTP over the VPN), the rest as the seed shows them.
 */
export const SECURITY: RouteOptionsSecure = {
  hsts: false,
  xframe: 'sameorigin',
  xss: 'disabled',
  noOpen: true,
  noSniff: true,
  referrer: 'strict-origin-when-cross-origin',
};

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The weak ETag of a 200 JSON body and its Cache-Control; hapi answers 304 to a GET or HEAD whose
 * If-None-Match names the same tag.
 */
function validators(response: ResponseObject, etag: string): ResponseObject {
  return response.etag(etag.slice('W/"'.length, -1), { weak: true, vary: false }).header('cache-control', 'max-age=0, private, must-revalidate');
}

/**
 * A JSON body serialised (and its ETag taken) before the request, as the extension below would answer
 * an object: same type, Vary and validators.
 */
export function jsonBody(request: Request, h: ResponseToolkit, body: string | Buffer, etag: string): ResponseObject {
  const response = h.response(body).type(JSON_TYPE).header('vary', request.route.settings.app?.vary ?? 'Origin');
  return validators(response, etag);
}

function isJsonSource(response: ResponseObject): boolean {
  const source = response.source as unknown;
  if (response.variety !== 'plain' || source === null || typeof source !== 'object') return false;
  return !Buffer.isBuffer(source) && typeof (source as { pipe?: unknown }).pipe !== 'function';
}

function runtime(startedAt: bigint): string {
  return (Number(process.hrtime.bigint() - startedAt) / 1e9).toFixed(6);
}

function isHtml(response: ResponseObject): boolean {
  return /^text\/html\b/i.test(String(response.headers['content-type'] ?? ''));
}

/**
 * The seed's common headers hapi does not send itself. JSON answers are serialised here so that
 * the ETag is taken over the exact bytes sent. HTML pages (error pages included) get `csp`, the
 * Content-Security-Policy (src/server/content-security-policy.ts).
 */
export function registerHeaders(server: Server, csp = contentSecurityPolicy('')): void {
  server.ext(
    'onPreResponse',
    (request, h) => {
      const current = request.response;
      if (!current || Boom.isBoom(current)) return h.continue;
      let response = current;
      if (isJsonSource(response)) {
        const body = JSON.stringify(response.source);
        const next = h.response(body).code(response.statusCode).type(JSON_TYPE);
        for (const [name, value] of Object.entries(response.headers)) {
          if (name.toLowerCase() !== 'content-type') next.header(name, String(value));
        }
        next.header('vary', request.route.settings.app?.vary ?? 'Origin');
        if (response.statusCode === 200) validators(next, weakEtag(body));
        else next.header('cache-control', 'no-cache');
        response = next;
      }
      if (isHtml(response)) response.header('content-security-policy', csp);
      response.header('x-permitted-cross-domain-policies', 'none');
      response.header('x-request-id', request.app.requestId);
      response.header('x-runtime', runtime(request.app.startedAt));
      return response === current ? h.continue : response;
    },
    { after: [EXT.errors] },
  );
}
