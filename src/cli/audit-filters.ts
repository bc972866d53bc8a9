/**
 * `rigd audit --client ADDRESS --kind KIND[,KIND...]`: the values checked and put in the form the
 * audit log records, or a usage error (exit 2) saying what is wrong.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { isAuditKind } from '../services/audit/log.ts';
import { UsageError } from './fail.ts';

const shown = (value: string) => value.replace(/\p{C}/gu, '?').slice(0, 80);

/**
 * An IPv4 or IPv6 address as the audit log records a client: IPv6 in its short lower-case form
 * (2001:db8::1), an IPv4-mapped IPv6 address as the IPv4 address.
 */
export function parseClient(value: string): string {
  const text = value.trim();
  // net.isIP: dotted quads only (ipaddr.js alone also reads 10.1, 0x0a.1.2.3 and 010.1.2.3 as addresses).
  if (isIP(text) === 0 || text.includes('%')) {
    throw new UsageError(`--client must be an IP address such as 10.144.3.7 or 2001:db8::7 (no prefix, no port), got "${shown(value)}"`);
  }
  let addr = ipaddr.parse(text);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  return addr.toString();
}

/** A comma-separated list of audit kinds (`area.what`, lower case), each as given. */
export function parseKinds(value: string): string[] {
  const kinds = value.split(',').map((k) => k.trim());
  const bad = kinds.find((k) => !isAuditKind(k));
  if (bad !== undefined) {
    throw new UsageError(`--kind must be audit kinds separated by commas, such as rig.refused or key.refused,login.failed (area.what, lower case), got "${shown(bad === '' ? value : bad)}"`);
  }
  return [...new Set(kinds)];
}
