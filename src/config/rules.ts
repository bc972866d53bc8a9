/**
 * Validation rules for config values joi does not know: CIDRs and addresses (parsed by ipaddr.js,
 * as the server parses them), URLs, endpoints and paths. A rule that refuses a value throws a
 * Problem whose message says what the value is not and what is allowed; describe.ts puts the key,
 * the value and the source around it.
 */
import Joi from 'joi';
import ipaddr from 'ipaddr.js';
import { databaseUrlProblem } from '../db/database-url.ts';

/** "is not an IPv4 CIDR (expected like 10.144.0.0/16)": what is wrong and what is allowed. */
export class Problem extends Error {
  override name = 'Problem';
}

/** A problem found by a check across keys (the whole-config rules): names its own key and value. */
export class KeyedProblem extends Problem {
  constructor(
    readonly key: string,
    readonly value: unknown,
    message: string,
  ) {
    super(message);
  }
}

/** a.b.c.d with four decimal parts 0-255 (no octal, hex or shortened forms ipaddr.js would also take). */
function isIPv4(text: string): boolean {
  return ipaddr.IPv4.isValidFourPartDecimal(text);
}

function isIPv6(text: string): boolean {
  return text.includes(':') && ipaddr.IPv6.isValid(text);
}

/** The prefix length after "/", or null when it is not a decimal integer within 0..max. */
function prefixOf(text: string, max: number): number | null {
  if (!/^\d{1,3}$/.test(text)) return null;
  const n = Number(text);
  return n <= max ? n : null;
}

const CIDR_EXPECTED = '(expected an IPv4 address and a prefix length 0-32, like 10.144.0.0/16)';

/** An IPv4 range: a.b.c.d/n, n 0-32. */
export function ipv4Cidr(): Joi.StringSchema {
  return Joi.string().custom((value: string) => {
    const [address, prefix, extra] = value.split('/');
    if (extra !== undefined || prefix === undefined || !isIPv4(address) || prefixOf(prefix, 32) === null) {
      throw new Problem(`is not an IPv4 CIDR ${CIDR_EXPECTED}`);
    }
    ipaddr.IPv4.parseCIDR(value); // what the server will do with it; cannot throw after the checks above
    return value;
  }, 'IPv4 CIDR');
}

/** An IPv4 or IPv6 address, or a CIDR of either (a trusted proxy). */
export function addressOrCidr(): Joi.StringSchema {
  return Joi.string().custom((value: string) => {
    const [address, prefix, extra] = value.split('/');
    const v4 = isIPv4(address);
    const ok = extra === undefined && (v4 || isIPv6(address)) && (prefix === undefined || prefixOf(prefix, v4 ? 32 : 128) !== null);
    if (!ok) throw new Problem('is not an IP address or CIDR (expected like 10.0.0.1, 10.0.0.0/8 or fd00::/8)');
    if (prefix === undefined) ipaddr.parse(address);
    else ipaddr.parseCIDR(value);
    return value;
  }, 'IP address or CIDR');
}

/** Why text is not a usable http(s) base URL, or null when it is one. */
function urlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `has scheme ${url.protocol.slice(0, -1)}, not http or https`;
  if (!/^https?:\/\/[^/?#]/i.test(text) || !url.hostname) return 'has no host';
  if (url.username || url.password) return 'carries a user name or password';
  if (url.search || url.hash || /[?#]/.test(text)) return 'has a query or fragment';
  return null;
}

/** An http:// or https:// URL with a host (a path is allowed; credentials, query and fragment are not). */
export function httpUrl(example: string): Joi.StringSchema {
  return Joi.string().custom((value: string) => {
    const why = urlProblem(value);
    if (why) throw new Problem(`${why} (expected an http(s) URL like ${example})`);
    return value;
  }, 'http(s) URL');
}

/** Placeholders a map tile URL template may use (Leaflet's XYZ tile layer fills them in). */
const TILE_PLACEHOLDERS = ['s', 'z', 'x', 'y', 'r'];

/**
 * An XYZ tile URL template: an http(s) URL with {z}, {x} and {y} (and optionally {s} for a
 * subdomain, {r} for retina); a query is allowed (API keys), credentials and fragments are not.
 */
export function tileUrlTemplate(example: string): Joi.StringSchema {
  const expected = `(expected an http(s) URL template with {z}, {x} and {y}, like ${example})`;
  return Joi.string().custom((value: string) => {
    const unknown = [...value.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1]).find((name) => !TILE_PLACEHOLDERS.includes(name as string));
    if (unknown !== undefined) throw new Problem(`has an unknown placeholder {${unknown}} ${expected}`);
    const missing = ['z', 'x', 'y'].filter((name) => !value.includes(`{${name}}`));
    if (missing.length) throw new Problem(`lacks ${missing.map((n) => `{${n}}`).join(', ')} ${expected}`);
    const filled = value.replace(/\{s\}/g, 'a').replace(/\{r\}/g, '').replace(/\{[zxy]\}/g, '0');
    if (/[{}]/.test(filled)) throw new Problem(`has an unbalanced brace ${expected}`);
    let url: URL;
    try {
      url = new URL(filled);
    } catch {
      throw new Problem(`is not a URL ${expected}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Problem(`has scheme ${url.protocol.slice(0, -1)}, not http or https ${expected}`);
    if (!/^https?:\/\/[^/?#]/i.test(filled) || !url.hostname) throw new Problem(`has no host ${expected}`);
    if (url.username || url.password) throw new Problem(`carries a user name or password ${expected}`);
    if (url.hash || filled.includes('#')) throw new Problem(`has a fragment ${expected}`);
    return value;
  }, 'tile URL template');
}

/** host, host:port, [v6]:port, or an http(s) URL (how MinIO endpoints are written). */
export function endpoint(): Joi.StringSchema {
  const expected = '(expected host[:port] or an http(s) URL, like 127.0.0.1, minio.internal:9000 or https://minio.example)';
  return Joi.string().custom((value: string) => {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
      const why = urlProblem(value);
      if (why) throw new Problem(`${why} ${expected}`);
      // The S3 client addresses buckets at the root: a path would be left out of every request and signed URL.
      const url = new URL(value);
      if (url.pathname !== '/') throw new Problem(`has a path (${url.pathname}); MinIO is reached at the root of its address ${expected}`);
      if (url.port === '0') throw new Problem(`has port 0 (expected a port from 1 to 65535) ${expected}`);
      return value;
    }
    const slash = /^((?:\[[^\]/]+\]|[^/:[\]]+)(?::\d{1,5})?)\/+$/.exec(value)?.[1];
    if (slash) throw new Problem(`has a "/" after the host (expected ${slash}, or an http(s) URL like http://${slash}/)`);
    const zone = /^\[[^\]%]*(%[^\]]*)\]/.exec(value)?.[1];
    if (zone !== undefined) throw new Problem(`has an IPv6 zone (${zone}), which a URL cannot carry (expected an address without one, like [fd00::1]:9000)`);
    if (!value.includes('[') && (isIPv6(value) || isIPv6(value.replace(/:\d{1,5}$/, '')))) {
      throw new Problem('is an IPv6 address without brackets (expected like [::1] or [::1]:9000)');
    }
    const m = /^(\[[^\]]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(value);
    const host = m?.[1] ?? '';
    const hostOk = host.startsWith('[') ? isIPv6(host.slice(1, -1)) : isIPv4(host) || Joi.string().hostname().validate(host).error === undefined;
    if (!m || !hostOk || (/^\d+(\.\d+)*$/.test(host) && !isIPv4(host))) throw new Problem(`is not a host or endpoint ${expected}`);
    if (m[2] !== undefined && Number(m[2]) > 65535) throw new Problem(`has port ${m[2]}, above 65535 ${expected}`);
    if (m[2] !== undefined && Number(m[2]) === 0) throw new Problem(`has port 0 (expected a port from 1 to 65535) ${expected}`);
    return value;
  }, 'endpoint');
}

/** An S3 bucket name as MinIO (its server, and the minio client before any request) accepts it. */
export function bucketName(): Joi.StringSchema {
  const expected = '(expected 3-63 lowercase letters, digits, dots and hyphens, like captures)';
  return Joi.string().custom((value: string) => {
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(value) || value.includes('..') || isIPv4(value)) {
      throw new Problem(`is not an S3 bucket name ${expected}`);
    }
    if (value.includes('.-') || value.includes('-.')) throw new Problem(`is not an S3 bucket name: it has "-." or ".-", which MinIO refuses ${expected}`);
    const address = /\d+\.\d+\.\d+\.\d+/.exec(value)?.[0];
    if (address) throw new Problem(`is not an S3 bucket name: it holds an IP address form (${address}), which MinIO refuses ${expected}`);
    return value;
  }, 'S3 bucket name');
}

/** A file system path as text: not empty, no NUL, not absurdly long. Where it points is checked after load. */
export function pathText(): Joi.StringSchema {
  return Joi.string().custom((value: string) => {
    if (value.includes('\0')) throw new Problem('contains a NUL byte (expected a directory path, like /var/lib/rigd)');
    if (value.length > 4000) throw new Problem('is longer than 4000 characters (expected a directory path, like /var/lib/rigd)');
    return value;
  }, 'path');
}

/** database.url: empty (SQLite in data_dir) or a postgres:// / postgresql:// URL naming a database. */
export function databaseUrl(): Joi.StringSchema {
  return Joi.string().custom((value: string) => {
    const problem = databaseUrlProblem(value);
    if (problem) throw new Problem(problem);
    return value;
  }, 'database URL');
}
