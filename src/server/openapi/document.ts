import type { Server } from '@hapi/hapi';
import { components } from './components.ts';
import { operation } from './operation.ts';
import { describedRoutes } from './walk-routes.ts';

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, Record<string, unknown>>> };

/** The OpenAPI 3.0 document of every described route of `server`, built from its joi schemas. */
export function buildDocument(server: Server): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  const tags = new Set<string>();
  for (const route of describedRoutes(server)) {
    const op = operation(route);
    for (const tag of op.tags as string[]) tags.add(tag);
    (paths[route.path] ??= {})[route.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.0.3',
    info: {
      title: 'rigd',
      version: 'v1',
      description:
        'Rig fleet appliance: sessions, user settings, rig reports and signed uploads (rig routes, VPN only), capture webhooks and captures. ' +
        'JSON unless stated; errors are `{"success": false, "error": {"code", "message", "details"}}`, rig reports answer text.',
    },
    tags: [...tags].sort().map((name) => ({ name })),
    paths,
    components: components(),
  };
}
