import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { App } from '../../services/app.ts';
import { InvalidInput } from '../../errors.ts';
import { TOKEN_COOKIE } from '../plugins/auth.ts';
import { authOf } from '../credentials.ts';
import { success, successSchema } from '../envelope.ts';

const loginPayload = Joi.object({
  login: Joi.string().min(1).max(254),
  email: Joi.string().min(1).max(254),
  username: Joi.string().min(1).max(254),
  password: Joi.string().min(1).max(1024).required(),
})
  .or('login', 'email', 'username')
  .unknown(true);

const userShape = Joi.object({
  id: Joi.string().required(),
  email: Joi.string().required(),
  username: Joi.string().required(),
  rig_ui_settings: Joi.any().required().allow(null).description('Free-form rig UI settings; null when unset.'),
});

const loginResponse = Joi.object({
  token: Joi.string().required(),
  data: Joi.object({ success: Joi.boolean().required(), token: Joi.string().required(), user: userShape.required() }).required(),
});

interface LoginPayload {
  login?: string;
  email?: string;
  username?: string;
  password: string;
}

export function sessionRoutes(app: App): ServerRoute[] {
  return [
    {
      method: 'POST',
      path: '/api/v1/sessions',
      options: {
        auth: false,
        description: 'Start a session: the token for the Authorization header',
        notes: 'The user is named by `login` (username or email); `email` and `username` are accepted in its place.',
        tags: ['sessions'],
        validate: { payload: loginPayload },
        response: { schema: loginResponse, sample: 0 },
        plugins: { openapi: { errors: [401, 429] } },
        handler: async (request) => {
          const body = request.payload as LoginPayload;
          const login = (body.login ?? body.email ?? body.username) as string;
          // Failed logins are counted per client as the VPN rule sees it (X-Forwarded-For only from a trusted proxy).
          const client = request.app.client;
          if (!client) throw new InvalidInput('the client address is unknown');
          const { token, user } = await app.metrics.logins.count(() => app.sessions.login(login, body.password, client.toString()));
          return {
            token,
            data: {
              success: true,
              token,
              user: { id: user.id, email: user.email, username: user.username, rig_ui_settings: user.rig_ui_settings },
            },
          };
        },
      },
    },
    {
      method: 'DELETE',
      path: '/api/v1/sessions',
      options: {
        auth: 'token',
        description: 'End the session of the presented token',
        tags: ['sessions'],
        response: { schema: successSchema(Joi.object({ username: Joi.string().required().description('The user whose session ended.') })), sample: 0 },
        handler: async (request, h) => {
          const { token, user } = authOf(request);
          await app.sessions.revoke(token, { username: user.username, client: request.app.client?.toString() ?? null });
          h.unstate(TOKEN_COOKIE);
          request.cookieAuth.clear();
          return success({ username: user.username });
        },
      },
    },
  ];
}
