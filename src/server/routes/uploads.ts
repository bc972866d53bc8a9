import type { ServerRoute } from '@hapi/hapi';
import type { App } from '../../services/app.ts';
import { clientAddress, parseCidrs } from '../client-address.ts';

/** GET /api/v1/rigs/upload: a rig on the VPN asks for a signed URL to PUT one file to. */
export function uploadRoutes(app: App): ServerRoute[] {
  const trusted = parseCidrs(app.config.server.trusted_proxies);
  return [
    {
      method: 'GET',
      path: '/api/v1/rigs/upload',
      options: {
        auth: false,
        app: { vpn: 'rig' },
        handler: (request) => {
          // The VPN guard has already checked this address is inside vpn.cidr.
          const peer = String(clientAddress(request, trusted));
          return app.uploads.reserve(request.query, peer);
        },
      },
    },
  ];
}
