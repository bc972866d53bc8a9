import type { ServerRoute } from '@hapi/hapi';
import type { App } from '../../services/app.ts';
import { rigDetail, type RigDetail } from '../../services/rig-detail.ts';
import { timeAgo } from '../../services/time-text.ts';
import { lanLink } from './rig-page.ts';

const position = (lat: number, lon: number) => `${lat.toFixed(5)}, ${lon.toFixed(5)}`;

/** A stored ISO time as templates/rig.hbs shows it: words, with the ISO 8601 time (with offset) as the title. */
function when(iso: string | null, now: Date) {
  return iso === null ? null : { iso, ago: timeAgo(new Date(iso), now) };
}

/**
 * What templates/rig.hbs shows. Handlebars escapes every value; link targets are built only from
 * validated values (an IP address, a DNS label and the configured domain).
 */
export function rigDetailPageModel(d: RigDetail, now: Date) {
  return {
    rig: d,
    lanUrl: d.lan_ip ? lanLink(d.lan_ip) : null,
    vpnUrl: `http://${d.vpn_name}`,
    position: d.latitude === null || d.longitude === null ? null : position(d.latitude, d.longitude),
    positions: d.positions.map((p) => ({ text: position(p.latitude, p.longitude), first: when(p.first_at, now), last: when(p.last_at, now), reports: p.reports })),
    uploads: d.uploads.recent.map((u) => ({ ...u, created: when(u.created_at, now), completed: when(u.completed_at, now) })),
    captures: d.captures.recent.map((c) => ({ ...c, updated: when(c.updated_at, now) })),
  };
}

/** GET /rigs/{id}: one rig's page (VPN or loopback, like /rigs); an unknown id is a 404 page. */
export function rigDetailPageRoutes(app: App): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/rigs/{id}',
      options: {
        auth: false,
        app: { vpn: 'viewer', errorFormat: 'html' },
        handler: async (request, h) => {
          const now = new Date();
          const detail = await rigDetail(app.db.reader, app.config, String(request.params.id), now);
          return h.view('rig', rigDetailPageModel(detail, now)).type('text/html; charset=utf-8').header('cache-control', 'no-cache');
        },
      },
    },
  ];
}
