import type { Server } from '@hapi/hapi';
import { InvalidInput } from '../../errors.ts';

/** Where a value came from, as the error names it. */
const SOURCES = [
  ['params', 'path parameter'],
  ['query', 'query parameter'],
  ['payload', 'field'],
] as const;

/** What is wrong with a text value, if anything. U+FFFD is what bytes that are not UTF-8 decode to. */
function flaw(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  if (value.includes('\0')) return 'must not contain a NUL character';
  if (value.includes('\uFFFD')) return 'must be UTF-8 text (it holds bytes that are not)';
  return undefined;
}

/** The first flat string value (or string in an array of them) of `values` that is not clean text: its name and why. */
function flawIn(values: unknown): [string, string] | undefined {
  if (typeof values !== 'object' || values === null || Buffer.isBuffer(values) || typeof (values as { pipe?: unknown }).pipe === 'function') return undefined;
  for (const [name, value] of Object.entries(values)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      const why = flaw(v);
      if (why) return [name, why];
    }
  }
  return undefined;
}

/**
 * No path parameter, query parameter or top-level body field may hold a NUL character or bytes
 * that are not UTF-8: no name, id, key or password has them, SQLite cuts a statement at a NUL,
 * PostgreSQL refuses it in text, and bytes that are not UTF-8 would be stored as U+FFFD, not as
 * sent. Checked on every route (but those that check their own) after the body is parsed, before
 * validation and the handler; nested values (free-form JSON such as rig UI settings) are stored as
 * JSON text, where a NUL is escaped.
 */
export function registerTextFields(server: Server): void {
  server.ext('onPostAuth', (request, h) => {
    // hapi's own notFound and badRequest routes (method '_special') answer on their own.
    if ((request.route.method as string) === '_special' || request.route.settings.app?.textFields === false) return h.continue;
    for (const [source, label] of SOURCES) {
      const found = flawIn(request[source]);
      if (found) {
        const [name, why] = found;
        throw new InvalidInput(`${label} ${name} ${why}`, [{ field: name, message: why }]);
      }
    }
    return h.continue;
  });
}
