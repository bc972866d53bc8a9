import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { InvalidInput } from '../../errors.ts';
import type { App } from '../../services/app.ts';
import { rigDetail } from '../../services/rig-detail.ts';
import { RIG_STATUSES, type RigStatus } from '../../services/rig-status.ts';
import { HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT, type RigReportView } from '../../services/rigs.ts';
import { clientAddress, parseCidrs } from '../client-address.ts';
import { toCsv } from '../csv.ts';

/** Largest rig report body (a handful of short fields). */
const REPORT_MAX_BYTES = 16 * 1024;

const REPORT_CSV_COLUMNS: { name: string; get: (r: RigReportView) => unknown; text?: boolean }[] = [
  { name: 'received_at', get: (r) => r.received_at },
  { name: 'rig_serial', get: (r) => r.serial, text: true },
  { name: 'gpsd_latitude', get: (r) => r.latitude },
  { name: 'gpsd_longitude', get: (r) => r.longitude },
  { name: 'local_ip', get: (r) => r.lan_ip },
  { name: 'software_version', get: (r) => r.version, text: true },
  { name: 'git_branch', get: (r) => r.branch, text: true },
  { name: 'peer_address', get: (r) => r.peer_address },
];

/** Everything under /api/v1/rigs: the VPN rule applies to all of it (the seed's rule). */
export function rigRoutes(app: App): ServerRoute[] {
  const trusted = parseCidrs(app.config.server.trusted_proxies);
  return [
    {
      method: 'PUT',
      path: '/api/v1/rigs/{id}',
      options: {
        auth: false,
        app: { vpn: 'rig', errorFormat: 'text' },
        payload: { allow: ['application/x-www-form-urlencoded', 'application/json'], maxBytes: REPORT_MAX_BYTES },
        handler: async (request, h) => {
          const peer = clientAddress(request, trusted);
          if (!peer) throw new InvalidInput('the client address is unknown');
          await app.rigs.report(String(request.params.id), request.payload, peer.toString());
          // Only now: the batch holding this report has committed.
          return h.response('Ok').type('text/plain; charset=utf-8');
        },
      },
    },
    {
      method: 'GET',
      path: '/api/v1/rigs',
      options: {
        auth: 'token',
        app: { vpn: 'rig' },
        validate: { query: Joi.object({ status: Joi.string().valid(...RIG_STATUSES) }) },
        handler: async (request) => {
          const rigs = await app.rigs.list({ status: request.query.status as RigStatus | undefined });
          return { success: true, rigs };
        },
      },
    },
    {
      // One rig as `rigd rigs show --json` prints it. A rig named "upload" is reached only through
      // the list and its reports: GET /api/v1/rigs/upload is the interface's upload request.
      method: 'GET',
      path: '/api/v1/rigs/{id}',
      options: {
        auth: 'token',
        app: { vpn: 'rig' },
        handler: async (request) => ({ success: true, rig: await rigDetail(app.db.reader, app.config, String(request.params.id), new Date()) }),
      },
    },
    {
      method: 'GET',
      path: '/api/v1/rigs/{id}/reports',
      options: {
        auth: 'token',
        app: { vpn: 'rig' },
        validate: {
          query: Joi.object({
            since: Joi.date().iso(),
            until: Joi.date().iso(),
            limit: Joi.number().integer().min(1).max(HISTORY_MAX_LIMIT).default(HISTORY_DEFAULT_LIMIT),
            format: Joi.string().valid('json', 'csv').default('json'),
          }),
        },
        handler: async (request, h) => {
          const q = request.query as { since?: Date; until?: Date; limit: number; format: 'json' | 'csv' };
          const rig = await app.rigs.get(String(request.params.id));
          const reports = await app.rigs.history(rig.id, q);
          if (q.format === 'csv') {
            return h
              .response(toCsv(REPORT_CSV_COLUMNS, reports))
              .type('text/csv; charset=utf-8')
              .header('content-disposition', `attachment; filename="${rig.id}-reports.csv"`);
          }
          return { success: true, rig: rig.id, reports };
        },
      },
    },
  ];
}
