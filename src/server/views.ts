import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { Server } from '@hapi/hapi';
import Inert from '@hapi/inert';
import Vision from '@hapi/vision';
import Handlebars from 'handlebars';

/** The package root: two levels up from src/server/ (under tsx) and from dist/server/ (built). */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** HTML templates (handlebars, escaping by default). */
export const TEMPLATES_DIR = path.join(PACKAGE_ROOT, 'templates');
/** Static files for pages (CSS), served by rigd itself: the gateway has no internet. */
export const PUBLIC_DIR = path.join(PACKAGE_ROOT, 'public');

/** @hapi/vision with handlebars for pages, @hapi/inert for public/. */
export async function registerViews(server: Server): Promise<void> {
  await server.register([Inert, Vision]);
  server.views({
    engines: { hbs: Handlebars.create() },
    path: TEMPLATES_DIR,
    isCached: true,
    contentType: 'text/html',
  });
}
