import { createRequire } from 'node:module';
import path from 'node:path';
import type { ServerRoute } from '@hapi/hapi';
import type { App } from '../../services/app.ts';
import { success } from '../envelope.ts';
import { pageAuth } from '../plugins/auth.ts';
import { mapRigs } from '../../services/rigs/track.ts';
import { RIG_STATUSES, statusMeaning } from '../../services/rigs/status.ts';
import { incidentBanner } from './rig-page.ts';

/**
 * The dist/ folders of leaflet and leaflet.markercluster, found the way Node finds the packages
 * (node_modules beside src/ or dist/, or beside the installed package): rigd serves them itself,
 * the gateway may have no internet.
 */
function packageDir(name: string): string {
  return path.dirname(createRequire(import.meta.url).resolve(`${name}/package.json`));
}
const packageDist = (name: string) => path.join(packageDir(name), 'dist');

/**
 * The land under the markers when no tile server is configured: Natural Earth's countries at
 * 1:110m (public domain) as TopoJSON from world-atlas (108 KB, revalidated by ETag), turned into shapes
 * in the browser by topojson-client. Only this one file is served, not the larger resolutions.
 */
export const WORLD_FILE = 'countries-110m.json';

const staticFiles = (dir: string) => ({ directory: { path: dir, index: false, listing: false, redirectToSlash: false } });

/** Seconds between reloads of the markers (the page takes ?refresh=N for a shorter interval). */
export const MAP_REFRESH_S = 60;

/** GET /map (the fleet on a map), GET /map/rigs.json (its markers) and the map library files; VPN or loopback, like /rigs. */
export function mapRoutes(app: App): ServerRoute[] {
  const th = app.config;
  return [
    {
      method: 'GET',
      path: '/map',
      options: {
        ...pageAuth(app.config),
        app: { vpn: 'viewer', errorFormat: 'html' },
        handler: async (_request, h) =>
          h
            .view('map', {
              ...(await incidentBanner(app.db.reader)),
              tilesUrl: app.config.page.map_tiles_url,
              logout: app.config.page.login,
              refreshS: MAP_REFRESH_S,
              legend: RIG_STATUSES.map((status) => ({ status, meaning: statusMeaning(status, th) })),
            })
            .type('text/html; charset=utf-8')
            .header('cache-control', 'no-cache'),
      },
    },
    {
      method: 'GET',
      path: '/map/rigs.json',
      options: {
        ...pageAuth(app.config, { json: true }),
        app: { vpn: 'viewer' },
        handler: async () => {
          // Nothing here changes unless a rig does (no time of generation), so the ETag lets an
          // unchanged list be answered 304.
          const rigs = await mapRigs(app.db.reader, app.config, new Date());
          return success({ rigs });
        },
      },
    },
    {
      method: 'GET',
      path: '/assets/leaflet/{file*}',
      options: { auth: false, app: { vpn: 'viewer', errorFormat: 'html' }, handler: staticFiles(packageDist('leaflet')) },
    },
    {
      method: 'GET',
      path: '/assets/leaflet.markercluster/{file*}',
      options: { auth: false, app: { vpn: 'viewer', errorFormat: 'html' }, handler: staticFiles(packageDist('leaflet.markercluster')) },
    },
    {
      method: 'GET',
      path: `/assets/world/${WORLD_FILE}`,
      options: {
        auth: false,
        app: { vpn: 'viewer', errorFormat: 'html' },
        handler: { file: { path: path.join(packageDir('world-atlas'), WORLD_FILE), confine: false } },
      },
    },
    {
      method: 'GET',
      path: '/assets/topojson-client/{file*}',
      options: { auth: false, app: { vpn: 'viewer', errorFormat: 'html' }, handler: staticFiles(packageDist('topojson-client')) },
    },
  ];
}
