import { randomUUID } from 'node:crypto';
import type { Request, RequestRoute, Server } from '@hapi/hapi';
import { enterRequestScope, outsideRequestScope } from '../../log/request-scope.ts';
import { clientAddress, parseCidrs } from '../client-address.ts';
import { EXT } from './names.ts';

/** An incoming X-Request-Id is kept when it survives sanitising; else a new UUID. */
export function requestIdFrom(header: unknown): string {
  if (typeof header === 'string') {
    const clean = header.replace(/[^A-Za-z0-9_@-]/g, '').slice(0, 255);
    if (clean) return clean;
  }
  return randomUUID();
}

/** The route a request will reach (null: none); hapi routes it only after onRequest. */
function routeOf(request: Request): RequestRoute | null {
  try {
    return request.server.match(request.method, request.path);
  } catch {
    // A path the router cannot parse: routing answers 400 and reaches no route.
    return null;
  }
}

/**
 * Stamps every request with its id, start time, client address and the route it will reach, first
 * thing. The client address (server.trusted_proxies rules) is computed here only. Lines logged while
 * serving the request carry its id (src/log/request-scope.ts), unless its route keeps no scope
 * (`app.logScope: false`): the scope ends when the request is answered.
 */
export function registerRequestContext(server: Server, trustedProxies: readonly string[]): void {
  const trusted = parseCidrs(trustedProxies);
  const leave = new WeakMap<Request, () => void>();
  server.ext('onRequest', (request, h) => {
    request.app.startedAt = process.hrtime.bigint();
    request.app.requestId = requestIdFrom(request.headers['x-request-id']);
    request.app.client = clientAddress(request, trusted);
    const route = routeOf(request);
    request.app.route = route;
    if (route?.settings.app?.logScope === false) outsideRequestScope();
    else leave.set(request, enterRequestScope(request.app.requestId));
    return h.continue;
  }, { before: [EXT.deadline, EXT.vpnGuard] });
  server.events.on('response', (request) => leave.get(request)?.());
}
