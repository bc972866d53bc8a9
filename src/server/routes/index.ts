import type { ServerRoute } from '@hapi/hapi';
import type { App } from '../../services/app.ts';
import { sessionRoutes } from './sessions.ts';
import { userRoutes } from './users.ts';

/** Every route, in the order a reader meets them. */
export function allRoutes(app: App): ServerRoute[] {
  return [...sessionRoutes(app), ...userRoutes(app)];
}
