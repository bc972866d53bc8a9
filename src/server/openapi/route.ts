import type { Server } from '@hapi/hapi';
import Joi from 'joi';
import { buildDocument, type OpenApiDocument } from './document.ts';

export const OPENAPI_PATH = '/api/v1/openapi.json';

/**
 * GET /api/v1/openapi.json: the API description, built once when the server initialises (after
 * every route is registered) from the routes' own joi schemas.
 */
export function registerOpenApi(server: Server): void {
  let document: OpenApiDocument | null = null;
  server.ext('onPreStart', () => {
    document = buildDocument(server);
  });
  server.route({
    method: 'GET',
    path: OPENAPI_PATH,
    options: {
      auth: false,
      description: 'This API description (OpenAPI 3.0)',
      tags: ['meta'],
      response: { schema: Joi.object({ openapi: Joi.string().required(), info: Joi.object().unknown(true), paths: Joi.object().unknown(true) }).unknown(true), sample: 0 },
      handler: () => document ?? buildDocument(server),
    },
  });
}
