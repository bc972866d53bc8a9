/**
 * Object URLs: building them from a public base, and parsing untrusted URLs back to (bucket, key) strictly
 * enough that nothing but one of our own object URLs gets through (webhook bodies are attacker-controlled).
 */
import { Unprocessable } from '../errors.ts';
import { keyProblem, type ObjectRef } from './contract.ts';
import { encodeKeyPath } from './sigv4.ts';

/** Where objects are served: scheme, the Host header value clients send, and a path prefix. */
export interface PublicBase {
  protocol: 'http:' | 'https:';
  /** Lower-case host name or [IPv6] literal, without port. */
  hostname: string;
  port: number;
  /** host, or host:port when the port is not the scheme's default: the Host header a client sends. */
  host: string;
  /** Path prefix without trailing slash ('' for none), e.g. '/storage'. */
  basePath: string;
}

const DEFAULT_PORT = { 'http:': 80, 'https:': 443 } as const;

/** Parses a base URL such as "http://vpn.rigs.internal:3000" or "https://gw.example/storage". */
export function parseBase(base: string): PublicBase {
  const u = new URL(base);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`storage base URL must be http or https: ${base}`);
  if (u.username || u.password || u.search || u.hash) throw new Error(`storage base URL must be a plain origin and path: ${base}`);
  const protocol = u.protocol;
  const port = u.port === '' ? DEFAULT_PORT[protocol] : Number(u.port);
  return {
    protocol,
    hostname: u.hostname.toLowerCase(),
    port,
    host: u.host.toLowerCase(),
    basePath: u.pathname.replace(/\/+$/, ''),
  };
}

/** Parses "host[:port]" (or a full http(s) URL) into a base, defaulting the scheme from `useSsl`. */
export function parseEndpoint(endpoint: string, useSsl: boolean, defaultPort?: number): PublicBase {
  const hasScheme = /^https?:\/\//i.test(endpoint);
  const protocol = useSsl ? 'https:' : 'http:';
  const base = parseBase(hasScheme ? endpoint : `${protocol}//${endpoint}`);
  const explicitPort = hasScheme ? new URL(endpoint).port !== '' : /(^[^:[\]]+|\])(:\d+)$/.test(endpoint);
  if (!explicitPort && defaultPort !== undefined && defaultPort !== DEFAULT_PORT[base.protocol]) {
    return { ...base, port: defaultPort, host: `${base.hostname}:${defaultPort}` };
  }
  return base;
}

/** A hostname as a socket wants it: an [IPv6] literal without its brackets. */
export function bareHostname(hostname: string): string {
  return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
}

/** `<base>/<bucket>/<key>` with each key segment URI-encoded (as MinIO's clients build object paths). */
export function buildObjectUrl(base: PublicBase, bucket: string, key: string): string {
  return `${base.protocol}//${base.host}${resourcePath(base, bucket, key)}`;
}

/** The URL path of an object: `<basePath>/<bucket>/<encoded key>`. This is what a SigV4 signature covers. */
export function resourcePath(base: PublicBase, bucket: string, key: string): string {
  return `${base.basePath}/${bucket}/${encodeKeyPath(key)}`;
}

export const NOT_STORAGE_URL = 'not_storage_url';
const MAX_URL_LENGTH = 8192;

function refuse(why: string): never {
  throw new Unprocessable(`not an object URL of this storage: ${why}`, NOT_STORAGE_URL);
}

/**
 * Bucket and key of `url` when it is an object URL under one of `bases` for `bucket`; otherwise throws
 * Unprocessable (`not_storage_url`). Deliberately stricter than a URL parser: the raw text is checked, so
 * nothing is normalised away ("a/../b", "%2e%2e", "%2f", default-port spellings of other hosts...).
 */
export function parseObjectUrlAgainst(url: unknown, bases: PublicBase[], bucket: string): ObjectRef {
  if (typeof url !== 'string') refuse('not a string');
  if (url.length === 0 || url.length > MAX_URL_LENGTH) refuse('empty or too long');
  // Printable ASCII only: no spaces, controls, NUL, backslashes (which URL parsers read as "/"), or raw non-ASCII.
  if (!/^[\x21-\x7e]+$/.test(url) || url.includes('\\')) refuse('characters that an object URL never contains');
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)(\/[^?#]*)?(\?[^#]*)?$/.exec(url);
  if (!m) refuse('not an absolute http(s) URL without fragment');
  const [, schemeRaw, authority, path = ''] = m as unknown as [string, string, string, string | undefined];
  const scheme = `${schemeRaw.toLowerCase()}:`;
  if (scheme !== 'http:' && scheme !== 'https:') refuse('scheme is not http or https');
  if (authority.includes('@')) refuse('user info in the URL');
  const hp = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(authority);
  if (!hp) refuse('malformed host');
  const hostname = hp[1]!.toLowerCase();
  const port = hp[2] === undefined ? DEFAULT_PORT[scheme] : Number(hp[2]);
  const base = bases.find((b) => b.protocol === scheme && b.hostname === hostname && b.port === port);
  if (!base) refuse('another host');

  const prefix = `${base.basePath}/${bucket}/`;
  if (!path.startsWith(prefix)) refuse('another bucket or path');
  const rawSegments = path.slice(prefix.length).split('/');
  const segments: string[] = [];
  for (const raw of rawSegments) {
    if (raw === '') refuse('an empty path segment');
    let seg: string;
    try {
      seg = decodeURIComponent(raw);
    } catch {
      refuse('malformed percent-encoding');
    }
    if (seg.includes('/')) refuse('an encoded "/" in a segment');
    if (seg === '.' || seg === '..') refuse('a "." or ".." segment');
    segments.push(seg);
  }
  const key = segments.join('/');
  const problem = keyProblem(key);
  if (problem !== null) refuse(problem);
  return { bucket, key };
}
