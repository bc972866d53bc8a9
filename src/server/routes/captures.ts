import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { CAPTURE_STATES } from '../../db/models/capture.ts';
import type { App } from '../../services/app.ts';
import { setSessionCookies } from '../plugins/auth.ts';
import { webhookUser } from '../plugins/webhook-auth.ts';

const listQuery = Joi.object({
  rig: Joi.string().max(63),
  project: Joi.string().max(64),
  state: Joi.string().valid(...CAPTURE_STATES),
  limit: Joi.number().integer().min(1).max(500).default(50),
  before: Joi.number().integer().min(1),
});

/**
 * POST /api/v1/webhooks/capture_uploaded (the seed's webhook, also MinIO's bucket notifications),
 * GET /api/v1/captures and GET /api/v1/captures/{id}.
 */
export function captureRoutes(app: App): ServerRoute[] {
  return [
    {
      method: 'POST',
      path: '/api/v1/webhooks/capture_uploaded',
      options: {
        auth: 'webhook',
        app: { vary: 'Accept, Origin' },
        handler: async (request, h) => {
          const user = webhookUser(request);
          const result = await app.captures.notify(request.payload, user ? 'user' : 'webhook');
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
        validate: { query: listQuery },
        handler: async (request) => {
          const q = request.query as { rig?: string; project?: string; state?: string; limit: number; before?: number };
          return { success: true, data: await app.captures.list(q) };
        },
      },
    },
    {
      method: 'GET',
      path: '/api/v1/captures/{id}',
      options: {
        auth: 'token',
        validate: { params: Joi.object({ id: Joi.number().integer().min(1).max(Number.MAX_SAFE_INTEGER).required() }) },
        handler: async (request) => ({ success: true, data: { capture: await app.captures.get(Number(request.params.id)) } }),
      },
    },
  ];
}
