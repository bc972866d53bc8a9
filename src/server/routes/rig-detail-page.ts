import type { ServerRoute } from '@hapi/hapi';
import type { App } from '../../services/app.ts';
import { durationText } from '../../services/rigs/availability.ts';
import { rigDetail, type RigDetail } from '../../services/rigs/detail.ts';
import { rigTrack } from '../../services/rigs/track.ts';
import { dateText } from '../../services/date-text.ts';
import { timeAgo } from '../../services/time-ago.ts';
import { pageAuth } from '../plugins/auth.ts';
import { lanLink } from './rig-page.ts';

const position = (lat: number, lon: number) => `${lat.toFixed(5)}, ${lon.toFixed(5)}`;

/** A stored ISO time as templates/rig.hbs shows it: words, with the ISO 8601 time (UTC, ending in Z) as the title. */
function when(iso: string | null, now: Date) {
  return iso === null ? null : { iso, ago: timeAgo(new Date(iso), now) };
}

/**
 * What templates/rig.hbs shows. Handlebars escapes every value; link targets are built only from
 * validated values (an IP address, a DNS label and the configured domain).
 */
export function rigDetailPageModel(d: RigDetail, now: Date, map?: { track: [number, number][]; tilesUrl: string }) {
  // The track's points (numbers only) go into a data attribute for public/rig-track.js; the
  // current fix closes the line so the map shows where the rig is even without a recent history.
  const track = map ? [...map.track] : [];
  const fix: [number, number] | null = d.latitude === null || d.longitude === null ? null : [d.latitude, d.longitude];
  const end = track[track.length - 1];
  if (fix && (!end || end[0] !== fix[0] || end[1] !== fix[1])) track.push(fix);
  return {
    trackJson: map && track.length ? JSON.stringify(track) : null,
    trackPoints: track.length,
    tilesUrl: map?.tilesUrl ?? '',
    rig: d,
    // The gateway's local time with its zone, for people (the JSON has only the UTC time).
    lastReportAbsolute: dateText(new Date(d.last_report.at)),
    firstSeenAbsolute: dateText(new Date(d.first_seen.at)),
    lanUrl: d.lan_ip ? lanLink(d.lan_ip) : null,
    vpnUrl: `http://${d.vpn_name}`,
    position: d.latitude === null || d.longitude === null ? null : position(d.latitude, d.longitude),
    positions: d.positions.map((p) => ({ text: position(p.latitude, p.longitude), first: when(p.first_at, now), last: when(p.last_at, now), reports: p.reports })),
    uploads: d.uploads.recent.map((u) => ({ ...u, created: when(u.created_at, now), completed: when(u.completed_at, now) })),
    captures: d.captures.recent.map((c) => ({ ...c, updated: when(c.updated_at, now) })),
    availability: {
      // Said only of a rig that is offline now, not above an online rig's shares.
      // Its own threshold (status.ts): its rhythm's, or rigs.offline_after_s without one.
      offlineNote: d.status === 'offline' ? `O${d.status_meaning.slice(1)}.` : null,
      retentionDays: d.availability.history_retention_days,
      shares: [
        ['last 24 h', d.availability.online_24h],
        ['last 7 days', d.availability.online_7d],
      ].map(([label, s]) => {
        const share = s as RigDetail['availability']['online_24h'];
        // A window longer than the retained history is shown as what it is: "80% of the last 1 d 6 h".
        const clipped = share.clipped && share.percent !== null;
        return { label, percent: share.percent === null ? 'unknown' : `${share.percent}%`, clippedTo: clipped ? `of the last ${durationText(share.window_s)}` : null };
      }),
      periods: d.availability.offline_periods.map((p) => ({ start: when(p.start, now), end: when(p.end, now), duration: durationText(p.duration_s) })),
    },
  };
}

/** GET /rigs/{id}: one rig's page (VPN or loopback, like /rigs); an unknown id is a 404 page. */
export function rigDetailPageRoutes(app: App): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/rigs/{id}',
      options: {
        ...pageAuth(app.config),
        app: { vpn: 'viewer', errorFormat: 'html' },
        handler: async (request, h) => {
          const now = new Date();
          const detail = await rigDetail(app.db.reader, app.config, String(request.params.id), now);
          const track = await rigTrack(app.db.reader, detail.id, now);
          const model = { ...rigDetailPageModel(detail, now, { track, tilesUrl: app.config.page.map_tiles_url }), logout: app.config.page.login };
          return h.view('rig', model).type('text/html; charset=utf-8').header('cache-control', 'no-cache');
        },
      },
    },
  ];
}
