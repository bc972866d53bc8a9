// A rig report as a rig in the field sends it: a form-encoded PUT from a namespace address, with
// the VPN host as Host (the VPN rule), answered "Ok" once its batch has committed.
import type { Hosts, HttpResponse } from './netns.ts';
import { VPN_HOST } from './browser.ts';

/** PUT /api/v1/rigs/{id} with `fields` from `from` (an address of namespace host `host`) to `base`. */
export function reportFrom(net: Hosts, host: string, base: string, id: string, fields: Record<string, string>, from: string): Promise<HttpResponse> {
  return net.request(host, {
    url: `${base}/api/v1/rigs/${id}`,
    method: 'PUT',
    headers: { host: VPN_HOST, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    localAddress: from,
  });
}
