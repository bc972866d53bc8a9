import type { Request } from '@hapi/hapi';
import ipaddr from 'ipaddr.js';

export type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Addresses seen lately, parsed: every request parses its peer's address (VPN rule, handler, log),
 * and a fleet is a few thousand peers. Emptied when full. Parsed addresses are never mutated.
 */
const parsed = new Map<string, Address | null>();
const PARSED_MAX = 16384;

/** Parses an address, turning IPv4-mapped IPv6 (::ffff:10.144.1.2) into IPv4; null if not an address. */
export function parseAddress(text: string | undefined): Address | null {
  if (!text) return null;
  let addr = parsed.get(text);
  if (addr !== undefined) return addr;
  addr = null;
  if (ipaddr.isValid(text)) {
    addr = ipaddr.parse(text);
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  }
  if (parsed.size >= PARSED_MAX) parsed.clear();
  parsed.set(text, addr);
  return addr;
}

/** An address as text (toString of ipaddr.js), made once per parsed address. */
const texts = new WeakMap<Address, string>();
export function addressText(addr: Address): string {
  let text = texts.get(addr);
  if (text === undefined) {
    text = addr.toString();
    texts.set(addr, text);
  }
  return text;
}

export type CidrList = [ipaddr.IPv4 | ipaddr.IPv6, number][];

export function parseCidrs(list: readonly string[]): CidrList {
  return list.map((entry) => (entry.includes('/') ? ipaddr.parseCIDR(entry) : [ipaddr.parse(entry), entry.includes(':') ? 128 : 32]) as [ipaddr.IPv4 | ipaddr.IPv6, number]).map(
    ([addr, bits]) => {
      if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
        return [(addr as ipaddr.IPv6).toIPv4Address(), Math.max(0, bits - 96)] as [ipaddr.IPv4, number];
      }
      return [addr, bits];
    },
  );
}

export function inCidrs(addr: ipaddr.IPv4 | ipaddr.IPv6, cidrs: CidrList): boolean {
  return cidrs.some(([range, bits]) => range.kind() === addr.kind() && addr.match(range, bits));
}

/**
 * The client's address: the socket peer, or, when the peer is a trusted proxy, the right-most
 * X-Forwarded-For entry that is not itself a trusted proxy. Computed once per request into
 * request.app.client (ext/request-context.ts); everything else reads that.
 */
export function clientAddress(request: Request, trustedProxies: CidrList): ipaddr.IPv4 | ipaddr.IPv6 | null {
  let addr = parseAddress(request.info.remoteAddress);
  if (!addr || trustedProxies.length === 0 || !inCidrs(addr, trustedProxies)) return addr;
  const header = request.headers['x-forwarded-for'];
  if (typeof header !== 'string') return addr;
  const hops = header.split(',').map((h) => h.trim()).reverse();
  for (const hop of hops) {
    const parsed = parseAddress(hop);
    if (!parsed) return null;
    addr = parsed;
    if (!inCidrs(parsed, trustedProxies)) return parsed;
  }
  return addr;
}
