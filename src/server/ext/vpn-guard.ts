import type { Request, ResponseToolkit, Server } from '@hapi/hapi';
import ipaddr from 'ipaddr.js';
import type { Config } from '../../config/schema.ts';
import { inCidrs, parseCidrs, type CidrList } from '../client-address.ts';
import { EXT } from './names.ts';
import { errorPageHtml, escapeHtml } from '../error-page.ts';

/**
 * Which network may reach a route, set per route as `options.app.vpn`:
 * - 'rig': the VPN rule of DESIGN.md (rig endpoints, the embedded store's object URLs): the Host is
 *   vpn.host or a literal IPv4 address inside vpn.cidr, and the client is inside vpn.cidr.
 * - 'viewer': pages for people (/rigs, /rigs/{id}, /map, /map/rigs.json, their assets, the login
 *   page): the client is inside page.allow (default loopback and vpn.cidr), and the Host is vpn.host,
 *   localhost, the host of server.base_url or an IP literal. The Host check here is against DNS
 *   rebinding: a page on an attacker's name that resolves to this gateway could otherwise read the
 *   rig list from a browser on the VPN. IP literals and vpn.host cannot be rebound by an outsider.
 * - 'metrics' (/metrics) and 'health' (/healthz): as 'viewer', with server.metrics_allow and
 *   server.health_allow (default loopback and vpn.cidr): a Prometheus or a load balancer outside the
 *   VPN can be let in without opening the pages.
 */
export type VpnMode = 'rig' | 'viewer' | 'metrics' | 'health';
type PeopleMode = Exclude<VpnMode, 'rig'>;

const LOOPBACK = parseCidrs(['127.0.0.0/8', '::1']);
const LOOPBACK_V4 = ipaddr.parse('127.0.0.1');
/** Host headers whose verdict is kept, per mode (emptied when full). */
const JUDGED_MAX = 1024;

/** The Host header lower-cased without its port; IPv6 literals keep their brackets. */
export function hostOf(header: string | undefined): string {
  const host = (header ?? '').trim().toLowerCase();
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end < 0 ? host : host.slice(0, end + 1);
  }
  return host.replace(/:\d*$/, '');
}

/** A literal four-part decimal IPv4 address ("10.144.evil.example" and "10.144" are not). */
function literalIPv4(host: string): ipaddr.IPv4 | null {
  return ipaddr.IPv4.isValidFourPartDecimal(host) ? ipaddr.IPv4.parse(host) : null;
}

/** Why a request was refused, for the 403 page: which check failed, who asked, what is allowed. */
export interface Refusal {
  failed: 'host' | 'peer';
  /** The client address as judged (X-Forwarded-For only from trusted proxies), or null when unreadable. */
  client: string | null;
  /** The networks clients may come from besides loopback (vpn.cidr, or the route's allow list). */
  network: string;
  /** Loopback clients are allowed too (pages for people). */
  loopback: boolean;
  /** The Host names allowed, in words. */
  hosts: string;
}

export interface VpnRule {
  /** True when the request may reach a route guarded with this mode. */
  allows(mode: VpnMode, request: Request): boolean;
  /** Null when allowed, else why not. */
  check(mode: VpnMode, request: Request): Refusal | null;
}

/** The config a rule reads; the allow lists default to loopback and vpn.cidr (the config's own default). */
export type VpnRuleConfig = Pick<Config, 'vpn'> & {
  page?: Pick<Config['page'], 'allow'>;
  server?: Pick<Config['server'], 'metrics_allow' | 'health_allow' | 'base_url'>;
};

/** Who may reach a mode's routes, and how the refusal page words it. */
interface Allowed {
  cidrs: CidrList;
  /** The allowed networks other than loopback, as configured. */
  network: string;
  loopback: boolean;
}

function allowed(list: readonly string[]): Allowed {
  const cidrs = parseCidrs(list);
  const others = list.filter((entry) => !inCidrs(parseCidrs([entry])[0]![0], LOOPBACK));
  return { cidrs, network: others.length > 0 ? others.join(', ') : 'no other network', loopback: inCidrs(LOOPBACK_V4, cidrs) };
}

function baseUrlHost(config: VpnRuleConfig): string | null {
  try {
    return config.server?.base_url ? new URL(config.server.base_url).hostname.toLowerCase() : null;
  } catch {
    return null;
  }
}

export function vpnRule(config: VpnRuleConfig): VpnRule {
  const vpn = parseCidrs([config.vpn.cidr]);
  const vpnHost = config.vpn.host.toLowerCase();
  const baseHost = baseUrlHost(config);
  const viewers = ['127.0.0.0/8', '::1/128', config.vpn.cidr];
  const people: Record<PeopleMode, Allowed> = {
    viewer: allowed(config.page?.allow ?? viewers),
    metrics: allowed(config.server?.metrics_allow ?? viewers),
    health: allowed(config.server?.health_allow ?? viewers),
  };

  const hostAllowed = (mode: VpnMode, host: string): boolean => {
    if (host === vpnHost) return true;
    const v4 = literalIPv4(host);
    if (mode === 'rig') return v4 !== null && inCidrs(v4, vpn);
    if (v4) return true;
    if (baseHost !== null && host === baseHost) return true;
    return host === 'localhost' || (/^\[[0-9a-f:.]+\]$/.test(host) && ipaddr.IPv6.isValid(host.slice(1, -1)));
  };
  const clientAllowed = (mode: VpnMode, request: Request): boolean => {
    const client = request.app.client;
    if (!client) return false;
    return inCidrs(client, mode === 'rig' ? vpn : people[mode].cidrs);
  };

  // A fleet sends a handful of Host headers from a few thousand addresses: each judged once per mode.
  const hosts: Record<VpnMode, Map<string, boolean>> = { rig: new Map(), viewer: new Map(), metrics: new Map(), health: new Map() };
  const hostAllowedCached = (mode: VpnMode, header: string | undefined): boolean => {
    const seen = hosts[mode];
    const key = header ?? '';
    let ok = seen.get(key);
    if (ok === undefined) {
      ok = hostAllowed(mode, hostOf(header));
      if (seen.size >= JUDGED_MAX) seen.clear();
      seen.set(key, ok);
    }
    return ok;
  };

  const check = (mode: VpnMode, request: Request): Refusal | null => {
    const header = request.headers.host;
    const hostOk = hostAllowedCached(mode, typeof header === 'string' ? header : undefined);
    if (hostOk && clientAllowed(mode, request)) return null;
    const client = request.app.client;
    const who = mode === 'rig' ? { network: config.vpn.cidr, loopback: false } : people[mode];
    return {
      failed: hostOk ? 'peer' : 'host',
      client: client ? client.toString() : null,
      network: who.network,
      loopback: who.loopback,
      hosts: mode === 'rig' ? `${config.vpn.host} or an IPv4 address in ${config.vpn.cidr}` : `${config.vpn.host}, localhost${baseHost && baseHost !== 'localhost' ? `, ${baseHost}` : ''} or an IP address`,
    };
  };
  return {
    allows: (mode, request) => check(mode, request) === null,
    check,
  };
}

/** What the 403 page says beyond its heading: who asked, which check failed, what is allowed. */
function refusalText(r: Refusal): string {
  const from = r.client === null ? 'an address that could not be read' : `<code>${escapeHtml(r.client)}</code>`;
  const network = `<code>${escapeHtml(r.network)}</code>${r.loopback ? ' or loopback' : ''}`;
  const why = r.failed === 'host' ? 'The Host header is not allowed here.' : `The client address is outside ${network}.`;
  return (
    `<p class="client">This request came from ${from}.</p>` +
    `<p class="reason">${why}</p>` +
    `<p class="allowed">Allowed: clients in ${network}, with Host ${escapeHtml(r.hosts)}.</p>`
  );
}

/**
 * The refusal: 403, text/html; charset=UTF-8. A Host that is not allowed is "Blocked host: <host>"
 * (as the seed's service); a client address outside the allowed networks is "Blocked client:
 * <address>", since the Host was fine. Pages for people link back to the rig list.
 */
export function blockedPage(h: ResponseToolkit, host: string, refusal?: Refusal, opts: { back?: boolean } = {}) {
  const byClient = refusal?.failed === 'peer';
  const heading = byClient ? `Blocked client: ${refusal?.client ?? 'unreadable address'}` : `Blocked host: ${host.slice(0, 255)}`;
  const body = errorPageHtml({
    title: byClient ? 'Blocked client' : 'Blocked host',
    heading,
    detailsHtml: `<p>This endpoint is only served on the rig VPN.</p>${refusal ? refusalText(refusal) : ''}`,
    back: opts.back ?? false,
  });
  return h.response(body).code(403).header('content-type', 'text/html; charset=UTF-8').takeover();
}

/** The methods routes serve, tried when the request's own method reaches no route. */
const OTHER_METHODS = ['GET', 'PUT', 'POST', 'PATCH', 'DELETE'] as const;

/**
 * Runs on every request before routing (after ext/request-context.ts has set request.app.client):
 * finds the route the request would reach and, when that route carries `app.vpn`, applies the rule.
 * Refused requests never reach auth, payload parsing or the handler.
 */
export function registerVpnGuard(server: Server, config: VpnRuleConfig): void {
  const rule = vpnRule(config);
  server.ext('onRequest', (request, h) => {
    let mode: VpnMode | undefined;
    try {
      // Found by ext/request-context.ts when it ran first.
      const route = request.app.route !== undefined ? request.app.route : request.server.match(request.method, request.path);
      // A method the path does not take (405) is still under the path's rule: the rule follows the path.
      mode = (route ?? OTHER_METHODS.map((m) => request.server.match(m, request.path)).find((r) => r !== null))?.settings.app?.vpn;
    } catch {
      // A path the router cannot parse: routing answers 400 and reaches no route.
      return h.continue;
    }
    const refusal = mode ? rule.check(mode, request) : null;
    if (!refusal) return h.continue;
    const header = request.headers.host;
    return blockedPage(h, typeof header === 'string' ? header : '', refusal, { back: mode === 'viewer' });
  }, { after: [EXT.context] });
}
