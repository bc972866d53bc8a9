import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { App } from '../../services/app.ts';
import { setSessionCookies } from '../plugins/auth.ts';
import { authOf } from '../credentials.ts';

/** Whether a parsed JSON value holds a number JSON cannot write back (1e999 parses as Infinity, stored as null). */
function holdsNonFinite(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (typeof value !== 'object' || value === null) return false;
  // Nesting is bounded by ext/json-depth.ts before validation runs.
  return Object.values(value).some(holdsNonFinite);
}

const updatePayload = Joi.object({
  user: Joi.object({
    id: Joi.alternatives(Joi.string().max(32), Joi.number()).allow(null),
    rig_ui_settings: Joi.any()
      .required()
      .custom((value: unknown, helpers) => (holdsNonFinite(value) ? helpers.message({ custom: '{{#label}} holds a number too large for JSON (it would be stored as null)' }) : value)),
  })
    .unknown(true)
    .required(),
}).unknown(true);

const updateResponse = Joi.object({
  token: Joi.string().required(),
  data: Joi.object({
    success: Joi.boolean().required(),
    user: Joi.object({
      email: Joi.string().required(),
      username: Joi.string().required(),
      rigUISettings: Joi.any().required().allow(null).description('The stored rig UI settings.'),
    }).required(),
  }).required(),
});

interface UpdatePayload {
  user: { id?: string | number | null; rig_ui_settings: unknown };
}

export function userRoutes(app: App): ServerRoute[] {
  return [
    {
      method: 'PUT',
      path: '/api/v1/users/{id}',
      options: {
        auth: 'token',
        description: "Store a user's rig UI settings",
        notes: 'Also sets the `token` and `_service_pm_session` cookies.',
        tags: ['users'],
        app: { vary: 'Accept, Origin' },
        response: { schema: updateResponse, sample: 0 },
        plugins: { openapi: { errors: [403] } },
        validate: { payload: updatePayload, params: Joi.object({ id: Joi.string().max(32).required() }) },
        handler: async (request, h) => {
          const auth = authOf(request);
          const { user: body } = request.payload as UpdatePayload;
          const user = await app.users.updateSettings(auth.user, String(request.params.id), body.id, body.rig_ui_settings, request.app.client?.toString() ?? null);
          setSessionCookies(request, h, auth);
          return {
            token: auth.token,
            data: { success: true, user: { email: user.email, username: user.username, rigUISettings: user.rig_ui_settings } },
          };
        },
      },
    },
  ];
}
