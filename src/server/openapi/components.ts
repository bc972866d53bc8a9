import { failureSchema } from '../envelope.ts';
import { toSchema } from './convert-schema.ts';

/** The error body of every JSON route (src/server/envelope.ts). */
export const errorBody = failureSchema;

/** Names of the security schemes. */
export const TOKEN_HEADER = 'tokenHeader';
export const TOKEN_COOKIE = 'tokenCookie';

/** Names of the shared responses. */
export const ERROR_RESPONSE = 'Error';
export const TEXT_ERROR_RESPONSE = 'TextError';
export const BLOCKED_RESPONSE = 'BlockedHost';

export function components(): Record<string, unknown> {
  return {
    schemas: { Error: toSchema(errorBody) },
    responses: {
      [ERROR_RESPONSE]: {
        description: 'An error: `{"success": false, "error": {"code", "message", "details"}}`.',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
      [TEXT_ERROR_RESPONSE]: {
        description: 'An error of a rig route: one line of text/plain saying what is wrong.',
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
      [BLOCKED_RESPONSE]: {
        description: 'The VPN rule refused the request (Host or client address outside the rig VPN): an HTML page "Blocked host".',
        content: { 'text/html': { schema: { type: 'string' } } },
      },
    },
    securitySchemes: {
      [TOKEN_HEADER]: {
        type: 'apiKey',
        in: 'header',
        name: 'Authorization',
        description:
          'The token from POST /api/v1/sessions, alone with no scheme word (`Authorization: <token>`); `Bearer <token>` is also accepted.',
      },
      [TOKEN_COOKIE]: {
        type: 'apiKey',
        in: 'cookie',
        name: 'token',
        description: 'The `token` cookie (path /api) that the user and webhook routes set; used when no Authorization header is sent.',
      },
    },
  };
}
