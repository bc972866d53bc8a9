import type { ServerRoute } from '@hapi/hapi';
import type { App } from '../../services/app.ts';
import { captureRoutes } from './captures.ts';
import { healthRoutes } from './health.ts';
import { loginPageRoutes } from './login-page.ts';
import { mapRoutes } from './map.ts';
import { objectRoutes } from './objects.ts';
import { rigDetailPageRoutes } from './rig-detail-page.ts';
import { rigPageRoutes } from './rig-page.ts';
import { rigRoutes } from './rigs.ts';
import { sessionRoutes } from './sessions.ts';
import { uploadRoutes } from './uploads.ts';
import { userRoutes } from './users.ts';

/** Every route, in the order a reader meets them. */
export function allRoutes(app: App): ServerRoute[] {
  const embedded = app.storage.driver === 'embedded' ? objectRoutes(app, app.storage) : [];
  return [...sessionRoutes(app), ...userRoutes(app), ...rigRoutes(app), ...loginPageRoutes(app), ...rigPageRoutes(app), ...rigDetailPageRoutes(app), ...mapRoutes(app), ...uploadRoutes(app), ...captureRoutes(app), ...healthRoutes(app), ...embedded];
}
