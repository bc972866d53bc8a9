import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { InvalidInput } from '../../errors.ts';
import { addressText } from '../client-address.ts';
import { success, successSchema } from '../envelope.ts';
import { jsonBody } from '../ext/headers.ts';
import { listNotes, listNotesSchema } from '../list-filters.ts';
import type { App } from '../../services/app.ts';
import { withStretches } from '../../services/rigs/availability.ts';
import { rigDetail } from '../../services/rigs/detail.ts';
import { RIG_STATUSES, type RigStatus } from '../../services/rigs/status.ts';
import { asReportRow, reportsCsv } from '../../services/rigs/report-csv.ts';
import { HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT } from '../../services/rigs/service.ts';

/** Largest rig report body (a handful of short fields). */
const REPORT_MAX_BYTES = 16 * 1024;

/** The rig report's form fields (checked in services/rigs/report-input.ts). */
const reportForm = Joi.object({
  rig_serial: Joi.string().max(128).required().description('Serial number of the rig.'),
  gpsd_latitude: Joi.string().allow('').description('Latitude as decimal text; empty or "nan" without a fix.'),
  gpsd_longitude: Joi.string().allow('').description('Longitude as decimal text; empty or "nan" without a fix.'),
  local_ip: Joi.string().allow('').description('Local IP address of the rig.'),
  software_version: Joi.string().max(128).allow('').description('Current software version.'),
  git_branch: Joi.string().max(128).allow('').description('Software branch.'),
}).unknown(true);

const rigView = Joi.object({
  id: Joi.string().required(),
  status: Joi.string().valid(...RIG_STATUSES).required(),
  last_seen_at: Joi.date().iso().required(),
  report_interval_s: Joi.number().allow(null).description("The rig's rhythm: the median of its last 20 intervals between reports, in seconds; null until learned. Its status is judged by it (docs/alerts.md)."),
  serial: Joi.string().required(),
  lan_ip: Joi.string().allow(null).required(),
  vpn_address: Joi.string().required(),
  bound_address: Joi.string().allow(null).description('The VPN address the id is bound to (rigs.address_binding); null: the next report binds it.'),
  vpn_name: Joi.string().required(),
  version: Joi.string().allow('').required(),
  branch: Joi.string().allow('').required(),
  latitude: Joi.number().allow(null).required(),
  longitude: Joi.number().allow(null).required(),
  current_project: Joi.string().allow(null).required(),
  created_at: Joi.date().iso().required(),
  online_since: Joi.string().isoDate().allow(null).description('When the current online stretch began (the first report after the last gap); null when offline.'),
  offline_since: Joi.string().isoDate().allow(null).description('The last report, when the rig is offline now; null when online.'),
});

/** One report of the history: the interface's field names, the same as the CSV's columns. */
const reportView = Joi.object({
  received_at: Joi.string().isoDate().required().description('ISO 8601 UTC, ending in Z.'),
  rig_serial: Joi.string().required(),
  gpsd_latitude: Joi.number().allow(null).required(),
  gpsd_longitude: Joi.number().allow(null).required(),
  local_ip: Joi.string().allow(null).required(),
  software_version: Joi.string().allow('').required(),
  git_branch: Joi.string().allow('').required(),
  peer_address: Joi.string().required().description('The VPN address the report came from.'),
});

/** Everything under /api/v1/rigs: the VPN rule applies to all of it (the seed's rule). */
export function rigRoutes(app: App): ServerRoute[] {
  return [
    {
      method: 'PUT',
      path: '/api/v1/rigs/{id}',
      options: {
        auth: false,
        description: 'Report a rig: location and software state (form body, answers Ok)',
        tags: ['rigs'],
        // No log scope (AsyncLocalStorage stays off for reports): its lines name the request themselves.
        app: { vpn: 'rig', errorFormat: 'text', logScope: false },
        response: { schema: Joi.string().valid('Ok'), sample: 0 },
        plugins: { openapi: { payload: reportForm, consumes: ['application/x-www-form-urlencoded', 'application/json'], produces: 'text/plain' } },
        payload: { allow: ['application/x-www-form-urlencoded', 'application/json'], maxBytes: REPORT_MAX_BYTES },
        // Rigs send no cookies, and nothing here reads one: no cookie parsing step.
        state: { parse: false, failAction: 'ignore' },
        handler: async (request, h) => {
          const peer = request.app.client;
          if (!peer) throw new InvalidInput('the client address is unknown');
          await app.rigs.report(String(request.params.id), request.payload, addressText(peer), request.app.requestId);
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
        description: 'List rigs with their computed status',
        tags: ['rigs'],
        app: { vpn: 'rig' },
        response: { schema: successSchema(Joi.object({ rigs: Joi.array().items(rigView).required(), ...listNotesSchema })), sample: 0 },
        validate: { query: Joi.object({ status: Joi.string().valid(...RIG_STATUSES) }) },
        handler: async (request, h) => {
          const status = request.query.status as RigStatus | undefined;
          // Serialised (and its ETag taken) once per generation of the rig list (services/rigs/list-cache.ts).
          const { bytes, etag } = await app.rigs.listing.body(`api:${status ?? 'all'}`, async (rigs, at) => {
            const selected = status ? rigs.filter((r) => r.status === status) : rigs;
            const notes = listNotes(selected.length, 'rigs', [['status', 'with status', status]]);
            return JSON.stringify(success({ rigs: await withStretches(app.db.reader, app.config, selected, at), ...notes }));
          });
          return jsonBody(request, h, bytes, etag);
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
        description: 'One rig: status, positions, recent uploads and captures',
        tags: ['rigs'],
        app: { vpn: 'rig' },
        response: {
          schema: successSchema(Joi.object({
            rig: Joi.object({
              id: Joi.string().required(),
              status: Joi.string().valid(...RIG_STATUSES).required(),
              status_meaning: Joi.string().required(),
              serial: Joi.string().required(),
              vpn_address: Joi.string().required(),
              vpn_name: Joi.string().required(),
              lan_ip: Joi.string().allow(null).required(),
              latitude: Joi.number().allow(null).required(),
              longitude: Joi.number().allow(null).required(),
              positions: Joi.array().items(Joi.object().unknown(true)).required(),
              uploads: Joi.object({ total: Joi.number().integer().required(), recent: Joi.array().required() }).required(),
              captures: Joi.object({ total: Joi.number().integer().required(), recent: Joi.array().required() }).required(),
            })
              .unknown(true)
              .required(),
          })),
          sample: 0,
        },
        handler: async (request) => success({ rig: await rigDetail(app.db.reader, app.config, String(request.params.id), new Date()) }),
      },
    },
    {
      method: 'GET',
      path: '/api/v1/rigs/{id}/reports',
      options: {
        auth: 'token',
        description: "A rig's report history (JSON, or CSV with format=csv)",
        tags: ['rigs'],
        app: { vpn: 'rig' },
        response: {
          schema: successSchema(Joi.object({ rig: Joi.string().required(), reports: Joi.array().items(reportView).required(), ...listNotesSchema })),
          sample: 0,
        },
        plugins: { openapi: { alternatives: { 'text/csv': Joi.string() } } },
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
              .response(reportsCsv(reports.map(asReportRow)))
              .type('text/csv; charset=utf-8')
              .header('content-disposition', `attachment; filename="${rig.id}-reports.csv"`);
          }
          const notes = listNotes(reports.length, `reports of rig ${rig.id}`, [['since', 'since', q.since], ['until', 'until', q.until]]);
          return success({ rig: rig.id, reports: reports.map(asReportRow), ...notes });
        },
      },
    },
  ];
}
