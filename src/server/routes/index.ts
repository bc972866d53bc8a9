import type { ServerRoute } from '@hapi/hapi';
import type { App } from '../../services/app.ts';
import { rigPageRoutes } from './rig-page.ts';
import { rigRoutes } from './rigs.ts';
import { sessionRoutes } from './sessions.ts';
import { userRoutes } from './users.ts';

/** Every route, in the order a reader meets them. */
export function allRoutes(app: App): ServerRoute[] {
  return [...sessionRoutes(app), ...userRoutes(app), ...rigRoutes(app), ...rigPageRoutes(app)];
}
