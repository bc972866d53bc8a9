import type { Server } from '@hapi/hapi';
import { InvalidInput } from '../../errors.ts';

/**
 * Deepest nesting of objects and arrays a request body may have (the top-level value is depth 1).
 * Deeper values are refused before validation or a handler sees them: serialising one again
 * (JSON.stringify, the ETag of an echo) would exhaust the stack.
 */
export const MAX_JSON_DEPTH = 64;

/** Nesting depth of a parsed value, counted without recursion; stops as soon as it passes `limit`. */
export function jsonDepth(value: unknown, limit = Infinity): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > deepest) deepest = depth;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return deepest;
}

/** Whether value's own values are all primitives (a form, a flat JSON object): depth 1 at most, no walk needed. */
function isFlat(value: object): boolean {
  for (const key in value) {
    const child = (value as Record<string, unknown>)[key];
    if (typeof child === 'object' && child !== null) return false;
  }
  return true;
}

/** Every parsed body (JSON or form), on every route, is checked after parsing and before validation. */
export function registerJsonDepth(server: Server, limit = MAX_JSON_DEPTH): void {
  server.ext('onPostAuth', (request, h) => {
    const payload = request.payload;
    if (typeof payload !== 'object' || payload === null || Buffer.isBuffer(payload) || typeof (payload as { pipe?: unknown }).pipe === 'function') {
      return h.continue;
    }
    if ((limit >= 1 && isFlat(payload)) || jsonDepth(payload, limit) <= limit) return h.continue;
    throw new InvalidInput(`the request body is nested deeper than ${limit} levels of objects and arrays`, [{ message: `at most ${limit} levels` }], 'json_too_deep');
  });
}
