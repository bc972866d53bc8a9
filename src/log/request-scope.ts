/**
 * The request a line is logged for: the server enters a scope holding the request id when a
 * request arrives, and every line logged while serving it (routes, services, the ingest calls they
 * make) carries that `request_id`, without passing a logger down.
 *
 * AsyncLocalStorage is enabled only while a request holding a scope is being served: enabled, Node
 * runs its hooks for every promise of the process, not only for that request's. A route that keeps
 * no scope (`app.logScope: false`: the rig report, whose lines name their request themselves) never
 * enables it, so a stream of rig reports alone runs without those hooks.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface RequestScope {
  request_id: string;
}

const requestScope = new AsyncLocalStorage<RequestScope | undefined>();
/** Requests holding a scope, not yet answered. */
let open = 0;

/** The request id of the scope this line is logged in, if any. */
export function currentRequestId(): string | undefined {
  return requestScope.getStore()?.request_id;
}

/** Requests holding a scope now (AsyncLocalStorage is enabled while there is one). */
export function openRequestScopes(): number {
  return open;
}

/**
 * From here on in this async flow, lines carry this request id. Returns the function that ends the
 * scope when its request is answered (once; later calls do nothing): the last one to end disables
 * AsyncLocalStorage again.
 */
export function enterRequestScope(requestId: string): () => void {
  open++;
  requestScope.enterWith({ request_id: requestId });
  let left = false;
  return () => {
    if (left) return;
    left = true;
    if (--open === 0) requestScope.disable();
  };
}

/**
 * A request that keeps no scope: its lines carry no request id, not even one an earlier request on
 * the same connection left behind (nothing to do while AsyncLocalStorage is off).
 */
export function outsideRequestScope(): void {
  if (open > 0) requestScope.enterWith(undefined);
}
