import Hapi from '@hapi/hapi';
import type { Logger } from '../log.ts';
import type { App } from '../services/app.ts';
import { cookieSecret } from '../services/auth/secrets.ts';
import { registerClientErrors } from './client-errors.ts';
import { registerBodyLimit } from './ext/body-limit.ts';
import { registerErrors } from './ext/errors.ts';
import { contentSecurityPolicy } from './content-security-policy.ts';
import { registerHeaders, SECURITY } from './ext/headers.ts';
import { registerJsonDepth } from './ext/json-depth.ts';
import { registerTextFields } from './ext/text-fields.ts';
import { EXT } from './ext/names.ts';
import { registerRequestContext } from './ext/request-context.ts';
import { registerRequestDeadline } from './ext/request-deadline.ts';
import { registerRequestLog } from './ext/request-log.ts';
import { registerVpnGuard } from './ext/vpn-guard.ts';
import { registerOpenApi } from './openapi/route.ts';
import { registerAuth } from './plugins/auth.ts';
import { registerWebhookAuth } from './plugins/webhook-auth.ts';
import { allRoutes } from './routes/index.ts';
import './types.ts';
import { failAction } from './validation.ts';
import { registerViews } from './views.ts';

export interface ServerOptions {
  port?: number;
  host?: string;
  log: Logger;
}

/** Builds the hapi server over the app's services: initialised, not started. */
export async function createServer(app: App, opts: ServerOptions): Promise<Hapi.Server> {
  const { config } = app;
  const server = Hapi.server({
    port: opts.port ?? config.server.port,
    host: opts.host ?? config.server.host,
    debug: false,
    // Bodies are small JSON; Content-Length must be the body length, as the seed shows.
    compression: false,
    router: { stripTrailingSlash: true },
    state: { strictHeader: false, ignoreErrors: true },
    routes: {
      validate: { failAction },
      // JSON unless a route says otherwise (the rig report route takes forms).
      payload: { maxBytes: config.server.max_payload_bytes, allow: 'application/json' },
      timeout: { server: false, socket: 120_000 },
      security: SECURITY,
    },
  });

  registerClientErrors(server.listener);
  registerRequestLog(server, opts.log, app.metrics.http, { reports: config.log.reports, summaryIntervalS: config.log.summary_interval_s, slowMs: config.log.slow_request_ms });
  // Each a named plugin: ext/names.ts orders them at each lifecycle point.
  const ext = (name: string, register: (s: Hapi.Server) => void): Hapi.Plugin<void> => ({ name, register });
  await server.register([
    ext(EXT.context, (s) => registerRequestContext(s, config.server.trusted_proxies)),
    ext(EXT.deadline, (s) => registerRequestDeadline(s)),
    ext(EXT.vpnGuard, (s) => registerVpnGuard(s, config)),
    ext(EXT.errors, (s) => registerErrors(s, opts.log)),
    ext(EXT.headers, (s) => registerHeaders(s, contentSecurityPolicy(config.page.map_tiles_url))),
    ext(EXT.jsonDepth, (s) => registerJsonDepth(s)),
    ext(EXT.textFields, (s) => registerTextFields(s)),
    ext(EXT.bodyLimit, (s) => registerBodyLimit(s)),
  ]);
  // PostgreSQL: one secret in the database for every node; SQLite: a file in data_dir.
  await registerAuth(server, app, await cookieSecret(config, app.db));
  registerWebhookAuth(server, app);
  await registerViews(server);
  server.route(allRoutes(app));
  registerOpenApi(server);
  await server.initialize();
  return server;
}
