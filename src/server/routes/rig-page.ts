import { isIPv6 } from 'node:net';
import type { ServerRoute } from '@hapi/hapi';
import type { App } from '../../services/app.ts';
import { openIncidentViews, type IncidentView } from '../../services/alerts/list.ts';
import { MIN_INTERVALS, RIG_STATUSES, statusMeaning } from '../../services/rigs/status.ts';
import type { RigView } from '../../services/rigs/view.ts';
import { timeAgo } from '../../services/time-ago.ts';
import { pageAuth } from '../plugins/auth.ts';
import { PUBLIC_DIR } from '../views.ts';

/** http://<ip> for a validated IP address (IPv6 in brackets). */
export function lanLink(ip: string): string {
  return `http://${isIPv6(ip) ? `[${ip}]` : ip}`;
}

/** What templates/rigs.hbs shows. Link targets are built only from validated values (an IP address, a DNS label, the configured domain). */
export function rigsPageModel(rigs: RigView[], app: Pick<App, 'config'>, now: Date) {
  const th = app.config;
  return {
    logout: app.config.page.login,
    count: rigs.length,
    generatedIso: now.toISOString(),
    legend: RIG_STATUSES.map((status) => ({ status, meaning: statusMeaning(status, th) })),
    counts: RIG_STATUSES.map((status) => ({ status, count: rigs.filter((r) => r.status === status).length, meaning: statusMeaning(status, th) })),
    rigs: rigs.map((r) => ({
      id: r.id,
      serial: r.serial,
      status: r.status,
      statusTitle: statusMeaning(r.status, th, { interval_s: r.report_interval_s ?? null, intervals: MIN_INTERVALS }),
      lanIp: r.lan_ip,
      lanUrl: r.lan_ip ? lanLink(r.lan_ip) : null,
      // The id is a validated DNS label: safe as a path segment.
      pageUrl: `/rigs/${r.id}`,
      vpnName: r.vpn_name,
      vpnUrl: `http://${r.vpn_name}`,
      branch: r.branch,
      version: r.version,
      // Like Rails' time_ago_in_words: "5 minutes ago", "about 2 hours ago".
      lastSeen: timeAgo(r.last_seen_at, now),
      lastSeenIso: r.last_seen_at.toISOString(),
      lastSeenTitle: r.last_seen_at.toISOString(),
    })),
  };
}

/** The open incidents above the table and the map (every string escaped by the template). */
export async function incidentBanner(reader: App['db']['reader']): Promise<{ incidents: IncidentView[]; incidentsOne: boolean }> {
  const incidents = await openIncidentViews(reader);
  return { incidents, incidentsOne: incidents.length === 1 };
}

/** GET /rigs (the seed's page, for clients on the VPN or loopback), GET / (to it) and the stylesheet. */
export function rigPageRoutes(app: App): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/',
      options: { auth: false, app: { vpn: 'viewer', errorFormat: 'html' }, handler: (_request, h) => h.redirect('/rigs') },
    },
    {
      method: 'GET',
      path: '/rigs',
      options: {
        ...pageAuth(app.config),
        app: { vpn: 'viewer', errorFormat: 'html' },
        handler: async (request, h) => {
          // Rendered once per generation of the rig list (services/rigs/list-cache.ts).
          const page = await app.rigs.listing.body('page', async (rigs, at) => request.render('rigs', { ...rigsPageModel(rigs, app, at), ...(await incidentBanner(app.db.reader)) }));
          return h.response(page.bytes).type('text/html; charset=utf-8').header('cache-control', 'no-cache');
        },
      },
    },
    {
      method: 'GET',
      path: '/assets/{file*}',
      options: {
        auth: false,
        app: { vpn: 'viewer', errorFormat: 'html' },
        handler: { directory: { path: PUBLIC_DIR, index: false, listing: false, redirectToSlash: false } },
      },
    },
  ];
}
