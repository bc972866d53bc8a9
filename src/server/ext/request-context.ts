import { randomUUID } from 'node:crypto';
import type { Server } from '@hapi/hapi';
import { enterRequestScope } from '../../log/request-scope.ts';
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

/**
 * Stamps every request with its id, start time and client address, first thing; its log lines
 * carry the id. The client address (server.trusted_proxies rules) is computed here only.
 */
export function registerRequestContext(server: Server, trustedProxies: readonly string[]): void {
  const trusted = parseCidrs(trustedProxies);
  server.ext('onRequest', (request, h) => {
    request.app.startedAt = process.hrtime.bigint();
    request.app.requestId = requestIdFrom(request.headers['x-request-id']);
    request.app.client = clientAddress(request, trusted);
    enterRequestScope(request.app.requestId);
    return h.continue;
  }, { before: [EXT.deadline, EXT.vpnGuard] });
}
