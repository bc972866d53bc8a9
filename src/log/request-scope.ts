/**
 * The request a line is logged for: the server enters a scope holding the request id when a
 * request arrives, and every line logged while serving it (routes, services, the ingest calls they
 * make) carries that `request_id`, without passing a logger down.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface RequestScope {
  request_id: string;
}

export const requestScope = new AsyncLocalStorage<RequestScope>();

/** From here on in this async flow, lines carry this request id. */
export function enterRequestScope(requestId: string): void {
  requestScope.enterWith({ request_id: requestId });
}
