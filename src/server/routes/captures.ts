import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { CAPTURE_STATES } from '../../db/models/capture.ts';
import type { App } from '../../services/app.ts';
import { appendAudit } from '../../services/audit/log.ts';
import { CONTENT_TYPES, EXPORT_FORMATS, exportTable } from '../../services/captures/export.ts';
import { ExportSlots } from '../../services/captures/export-slots.ts';
import { attachment } from '../content-disposition.ts';
import { success, successSchema } from '../envelope.ts';
import { type ListFilter, listNotes, listNotesSchema } from '../list-filters.ts';
import { setSessionCookies } from '../plugins/auth.ts';
import { authOf, webhookUser } from '../credentials.ts';

const listQuery = Joi.object({
  rig: Joi.string().max(63),
  project: Joi.string().max(64),
  state: Joi.string().valid(...CAPTURE_STATES),
  limit: Joi.number().integer().min(1).max(500).default(50),
  before: Joi.number().integer().min(1),
});

/** The webhook body (checked in services/captures/notice.ts): the interface's {url}, or a storage event. */
const notice = Joi.alternatives(
  Joi.object({ url: Joi.string().required().description('Location of the sqlite capture file in object storage.') }).unknown(true),
  Joi.object({ Records: Joi.array().items(Joi.object().unknown(true)).max(100).required() })
    .unknown(true)
    .description('A MinIO bucket notification (only with ingest.webhook_token).'),
);

const captureRef = Joi.object({ id: Joi.number().integer().required(), state: Joi.string().valid(...CAPTURE_STATES).required() })
  .allow(null)
  .description('The capture of that object version and its state; null when there is none.');

const reason = Joi.string()
  .valid('object_not_found', 'not_a_capture_file', 'no_capture_objects', ...CAPTURE_STATES.map((s) => `capture_${s}`))
  .description('Why nothing is or will be ingested (only when queued is false).');

const noticeResult = Joi.object({
  token: Joi.string().allow('').required().description('The user token; empty when ingest.webhook_token authorised the call.'),
  data: Joi.object({
    success: Joi.boolean().required(),
    url: Joi.string().allow('').required(),
    queued: Joi.boolean()
      .required()
      .description('True when the file is queued for ingestion: its capture is queued, being ingested, or ingested (a repeat notice included).'),
    capture: captureRef.required(),
    reason,
    objects: Joi.array().items(
      Joi.object({
        key: Joi.string().required(),
        queued: Joi.boolean().required(),
        capture: captureRef.required(),
        reason,
      }),
    ),
    ignored: Joi.number().integer(),
  }).required(),
});

const captureView = Joi.object({
  id: Joi.number().integer().required(),
  key: Joi.string().required(),
  state: Joi.string().valid(...CAPTURE_STATES).required(),
  size: Joi.number().integer().allow(null).required(),
  rig_id: Joi.string().allow(null).required(),
  project: Joi.string().allow(null).required(),
}).unknown(true);

/**
 * POST /api/v1/webhooks/capture_uploaded (the seed's webhook, also MinIO's bucket notifications),
 * GET /api/v1/captures, GET /api/v1/captures/{id} and GET /api/v1/captures/{id}/tables/{table}.
 */
export function captureRoutes(app: App): ServerRoute[] {
  const { export_max_concurrent: total, export_max_per_user: perUser, export_page_bytes: pageBytes } = app.config.captures;
  const slots = new ExportSlots({ total, perUser });
  return [
    {
      method: 'POST',
      path: '/api/v1/webhooks/capture_uploaded',
      options: {
        auth: 'webhook',
        description: 'A capture file was uploaded: queue it for ingestion',
        notes: 'A user token also sets the `token` and `_service_pm_session` cookies.',
        tags: ['captures'],
        app: { vary: 'Accept, Origin' },
        response: { schema: noticeResult, sample: 0 },
        plugins: { openapi: { payload: notice, errors: [403, 404, 422] } },
        handler: async (request, h) => {
          const user = webhookUser(request);
          const result = await app.captureNotices.notify(request.payload, user ? 'user' : 'webhook');
          await appendAudit(app.db, { kind: 'ingest.triggered', actor: user ? `user:${user.user.username}` : 'webhook', client: request.app.client?.toString() ?? null, subject: result.capture ? `capture ${result.capture.id}` : null, details: { queued: result.queued, ...(result.reason ? { reason: result.reason } : {}) } });
          // A user gets the seed's token and cookies; the webhook token is not a session: "" and no cookies.
          if (user) setSessionCookies(request, h, user);
          return { token: user ? user.token : '', data: { success: true, ...result } };
        },
      },
    },
    {
      method: 'GET',
      path: '/api/v1/captures',
      options: {
        auth: 'token',
        description: 'List captures, newest first, a page at a time',
        tags: ['captures'],
        response: {
          schema: successSchema(Joi.object({ captures: Joi.array().items(captureView).required(), next_before: Joi.number().integer().allow(null).required(), ...listNotesSchema })),
          sample: 0,
        },
        validate: { query: listQuery },
        handler: async (request) => {
          const q = request.query as { rig?: string; project?: string; state?: string; limit: number; before?: number };
          const page = await app.captures.list(q);
          const filters: ListFilter[] = [['rig', 'of rig', q.rig], ['project', 'in project', q.project], ['state', 'in state', q.state], ['before', 'before capture', q.before]];
          return success({ ...page, ...listNotes(page.captures.length, 'captures', filters) });
        },
      },
    },
    {
      method: 'GET',
      path: '/api/v1/captures/{id}',
      options: {
        auth: 'token',
        description: 'One capture and its ingestion state',
        tags: ['captures'],
        response: { schema: successSchema(Joi.object({ capture: captureView.required() })), sample: 0 },
        validate: { params: Joi.object({ id: Joi.number().integer().min(1).max(Number.MAX_SAFE_INTEGER).required() }) },
        handler: async (request) => success({ capture: await app.captures.get(Number(request.params.id)) }),
      },
    },
    {
      method: 'GET',
      path: '/api/v1/captures/{id}/tables/{table}',
      options: {
        auth: 'token',
        description: "One capture's rows of one table, streamed as CSV or NDJSON",
        notes:
          "The capture's own columns in its order (no capture_id), rows in insertion order. CSV: a header line, " +
          'RFC 4180 quoting, NULL as an empty field, blobs as base64. NDJSON: one object per line, blobs as base64 strings. ' +
          'Integers past 2^53 are exact (CSV: their digits; NDJSON: a string of their digits). ' +
          'Reals always have a point or an exponent (1.0, 1e+300): a real stays a real. ' +
          '409 `capture_not_ingested` until the capture is ingested; 404 `table_not_found` names the tables it has. ' +
          'Exports running at once are capped in total and per user (captures.export_max_concurrent, export_max_per_user): ' +
          '429 `too_many_exports` with Retry-After beyond.',
        tags: ['captures'],
        response: { schema: Joi.string().description('CSV with a header line'), sample: 0 },
        plugins: { openapi: { produces: CONTENT_TYPES.csv, alternatives: { [CONTENT_TYPES.ndjson]: Joi.string().description('One JSON object per line') }, errors: [409, 429] } },
        validate: {
          params: Joi.object({
            id: Joi.number().integer().min(1).max(Number.MAX_SAFE_INTEGER).required(),
            table: Joi.string().min(1).max(1024).required().description("The table's name as the capture spells it (any case)"),
          }),
          query: Joi.object({ format: Joi.string().valid(...EXPORT_FORMATS).default('csv') }),
        },
        handler: async (request, h) => {
          const { id, table } = request.params as { id: number; table: string };
          const onClose = slots.take(String(authOf(request).user.id));
          const format = (request.query as { format: string }).format;
          const out = await exportTable(app.captures, app.config.data_dir, Number(id), table, format, app.config.database.url, { pageBytes, onClose });
          // A client gone before or while the rows go out: its store handle and slot are released at once.
          request.events.once('disconnect', () => out.stream.destroy());
          return h.response(out.stream).type(out.contentType).header('content-disposition', attachment(out.filename));
        },
      },
    },
  ];
}
