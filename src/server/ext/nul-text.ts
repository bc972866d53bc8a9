import type { Server } from '@hapi/hapi';
import { InvalidInput } from '../../errors.ts';

/** Where a value came from, as the error names it. */
const SOURCES = [
  ['params', 'path parameter'],
  ['query', 'query parameter'],
  ['payload', 'field'],
] as const;

/** The first flat string value (or string in an array of them) of `values` that holds a NUL, by name. */
function nulIn(values: unknown): string | undefined {
  if (typeof values !== 'object' || values === null || Buffer.isBuffer(values) || typeof (values as { pipe?: unknown }).pipe === 'function') return undefined;
  for (const [name, value] of Object.entries(values)) {
    const texts = Array.isArray(value) ? value : [value];
    if (texts.some((v) => typeof v === 'string' && v.includes('\0'))) return name;
  }
  return undefined;
}

/**
 * No path parameter, query parameter or top-level body field may hold a NUL character: no name,
 * id, key or password has one, SQLite cuts a statement at it and PostgreSQL refuses it in text.
 * Checked on every route after the body is parsed, before validation and the handler; nested
 * values (free-form JSON such as rig UI settings) are stored as JSON text, where a NUL is escaped.
 */
export function registerNulText(server: Server): void {
  server.ext('onPostAuth', (request, h) => {
    // hapi's own notFound and badRequest routes (method '_special') answer on their own.
    if ((request.route.method as string) === '_special') return h.continue;
    for (const [source, label] of SOURCES) {
      const name = nulIn(request[source]);
      if (name !== undefined) {
        throw new InvalidInput(`${label} ${name} must not contain a NUL character`, [{ field: name, message: 'must not contain a NUL character' }]);
      }
    }
    return h.continue;
  });
}
