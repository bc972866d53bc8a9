import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { App } from '../../services/app.ts';

/** The query (checked in services/uploads/rules.ts). */
const uploadQuery = (maxSize: number) =>
  Joi.object({
    key: Joi.string().required().description('Object key (destination path) of the file to upload.'),
    size: Joi.number().integer().min(0).max(maxSize).required().description('Exact size of the file in bytes (at most storage.max_upload_size).'),
    project: Joi.string()
      .pattern(/^[a-z0-9][a-z0-9_-]{0,63}$/i)
      .description('Project slug: forces the project of the capture and of the rig\'s later captures.'),
  });

const reservation = Joi.object({
  success: Joi.boolean().required(),
  url: Joi.string().required().description('Signed URL for an HTTP PUT of the file, valid for storage.upload_url_ttl seconds.'),
  exists: Joi.boolean().required().description('A file with the same key and the same size exists.'),
  size: Joi.number().integer().allow(null).required().description('Size of the existing file with the key; null when none.'),
  id: Joi.number().integer().required().description('Identifier of the upload record.'),
});

/** GET /api/v1/rigs/upload: a rig on the VPN asks for a signed URL to PUT one file to. */
export function uploadRoutes(app: App): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/api/v1/rigs/upload',
      options: {
        auth: false,
        description: 'Reserve an upload: a signed URL to PUT one file to',
        tags: ['rigs', 'uploads'],
        app: { vpn: 'rig' },
        response: { schema: reservation, sample: 0 },
        plugins: { openapi: { query: uploadQuery(app.config.storage.max_upload_size) } },
        handler: (request) => {
          // The VPN guard has already checked this address is inside vpn.cidr.
          const peer = String(request.app.client);
          return app.uploads.reserve(request.query, peer);
        },
      },
    },
  ];
}
