/**
 * AWS Signature Version 4, query-string form ("presigned URLs"), for S3: signing and verification.
 *
 * Spec: https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html
 * The payload is never signed (`UNSIGNED-PAYLOAD`), and only the `host` header is signed, which is what
 * MinIO's clients do for presigned URLs; test/storage/sigv4.test.ts checks that our URLs are byte-identical
 * to the `minio` client's for the same inputs.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { S3Error } from './s3-error.ts';

export const ALGORITHM = 'AWS4-HMAC-SHA256';
const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';
/** Longest lifetime SigV4 allows for a presigned URL: 7 days. */
export const MAX_EXPIRES = 604800;
/** How far in the future X-Amz-Date may be before a URL counts as "not valid yet" (S3 and MinIO: 15 min). */
export const MAX_CLOCK_SKEW_S = 15 * 60;

export interface SigV4Credentials {
  accessKey: string;
  secretKey: string;
  region: string;
}

const UNRESERVED = /^[A-Za-z0-9\-_.~]*$/;

/** RFC 3986 encoding as SigV4 wants it: everything but A-Z a-z 0-9 - _ . ~ is percent-encoded (UTF-8). */
export function uriEscape(s: string): string {
  if (UNRESERVED.test(s)) return s;
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** An object key as a URL path: each segment encoded with {@link uriEscape}, the slashes kept. */
export function encodeKeyPath(key: string): string {
  return key.split('/').map(uriEscape).join('/');
}

/** 20130524T000000Z */
export function amzDate(d: Date): string {
  return d.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

function sha256Hex(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex');
}

function hmac(key: Buffer | string, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

/** Derived keys in use (a key changes once a day): four HMACs saved per signature. */
const derived = new Map<string, Buffer>();

/** The derived signing key for one day, region and service. */
export function signingKey(secretKey: string, yyyymmdd: string, region: string, service = 's3'): Buffer {
  const id = `${secretKey}\n${yyyymmdd}\n${region}\n${service}`;
  let key = derived.get(id);
  if (!key) {
    key = hmac(hmac(hmac(hmac(`AWS4${secretKey}`, yyyymmdd), region), service), 'aws4_request');
    if (derived.size >= 64) derived.clear();
    derived.set(id, key);
  }
  return key;
}

type QueryPairs = Array<[string, string]>;

/** Canonical query string: names and values encoded, sorted by name then value (bytewise on the encoded form). */
function canonicalQuery(pairs: QueryPairs): string {
  return pairs
    .map(([k, v]) => [uriEscape(k), uriEscape(v)] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

interface Canonical {
  method: string;
  /** Already URI-encoded path, e.g. "/captures/a%20b/c.db". */
  path: string;
  pairs: QueryPairs;
  /** Lower-case signed header names, sorted, with their values. */
  headers: Array<[string, string]>;
}

function stringToSign(c: Canonical, date: string, scope: string): string {
  const canonicalRequest = [
    c.method.toUpperCase(),
    c.path,
    canonicalQuery(c.pairs),
    c.headers.map(([k, v]) => `${k}:${v.trim().replace(/ +/g, ' ')}\n`).join(''),
    c.headers.map(([k]) => k).join(';'),
    UNSIGNED_PAYLOAD,
  ].join('\n');
  return [ALGORITHM, date, scope, sha256Hex(canonicalRequest)].join('\n');
}

export interface PresignInput {
  method: 'GET' | 'PUT' | 'HEAD' | 'DELETE';
  protocol: 'http:' | 'https:';
  /** The Host header the client will send: host, or host:port when the port is not the scheme's default. */
  host: string;
  /** URI-encoded path, e.g. "/captures/" + encodeKeyPath(key). */
  path: string;
  credentials: SigV4Credentials;
  date: Date;
  /** Seconds, 1..604800. */
  expires: number;
  /** Extra query parameters to sign (e.g. response-content-type), decoded values. */
  query?: Record<string, string>;
  /**
   * Headers besides host the request must carry with exactly these values, by lower-case name (e.g.
   * `content-length`: S3 and MinIO then refuse a PUT of any other length).
   */
  headers?: Record<string, string>;
}

/** A presigned URL, laid out exactly as the minio client lays it out. */
export function presignUrl(input: PresignInput): string {
  const { credentials: cred } = input;
  if (!Number.isInteger(input.expires) || input.expires < 1 || input.expires > MAX_EXPIRES) {
    throw new RangeError(`expires must be 1..${MAX_EXPIRES} seconds`);
  }
  const date = amzDate(input.date);
  const scope = `${date.slice(0, 8)}/${cred.region}/s3/aws4_request`;
  const extra = Object.entries(input.query ?? {});
  const amz: QueryPairs = [
    ['X-Amz-Algorithm', ALGORITHM],
    ['X-Amz-Credential', `${cred.accessKey}/${scope}`],
    ['X-Amz-Date', date],
    ['X-Amz-Expires', String(input.expires)],
  ];
  const host = input.host.toLowerCase();
  const headers: Array<[string, string]> = [['host', host], ...Object.entries(input.headers ?? {})];
  headers.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  amz.push(['X-Amz-SignedHeaders', headers.map(([n]) => n).join(';')]);
  const pairs = [...extra, ...amz];
  const toSign = stringToSign({ method: input.method, path: input.path, pairs, headers }, date, scope);
  const signature = createHmac('sha256', signingKey(cred.secretKey, date.slice(0, 8), cred.region))
    .update(toSign, 'utf8')
    .digest('hex');
  const query = pairs.map(([k, v]) => `${uriEscape(k)}=${uriEscape(v)}`).join('&');
  return `${input.protocol}//${host}${input.path}?${query}&X-Amz-Signature=${signature}`;
}

/** Query parameters as a server framework hands them over (decoded), or as URLSearchParams. */
export type QueryInput = URLSearchParams | Record<string, string | string[] | undefined>;

function toPairs(query: QueryInput): QueryPairs {
  if (query instanceof URLSearchParams) return [...query.entries()];
  const pairs: QueryPairs = [];
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) pairs.push([k, String(one)]);
  }
  return pairs;
}

export interface VerifyInput {
  method: string;
  /** The request's Host header, as received. */
  host: string | undefined;
  /** URI-encoded path the URL was signed for, e.g. "/captures/" + encodeKeyPath(key). */
  path: string;
  query: QueryInput;
  /** Credentials this server signs with; the URL's access key must be this one. */
  credentials: SigV4Credentials;
  now: Date;
  /** Other signed headers' values, by lower-case name, when a client signed more than `host`. */
  headers?: Record<string, string | undefined>;
}

const bad = (message: string) => new S3Error('AuthorizationQueryParametersError', message);

/**
 * Checks a presigned request the way S3 does. Returns nothing when it is valid; otherwise throws S3Error:
 * AuthorizationQueryParametersError (missing or malformed parameters), InvalidAccessKeyId, AccessDenied
 * (expired, or not valid yet), SignatureDoesNotMatch (anything signed differs: method, path, host, query).
 */
export function verifyPresigned(input: VerifyInput): void {
  const pairs = toPairs(input.query);
  const one = (name: string): string => {
    const found = pairs.filter(([k]) => k === name);
    if (found.length === 0) {
      throw bad(
        'Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, ' +
          'X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.',
      );
    }
    if (found.length > 1) throw bad(`${name} must appear only once`);
    return found[0]![1];
  };
  const algorithm = one('X-Amz-Algorithm');
  const credential = one('X-Amz-Credential');
  const date = one('X-Amz-Date');
  const expiresRaw = one('X-Amz-Expires');
  const signedHeaders = one('X-Amz-SignedHeaders');
  const signature = one('X-Amz-Signature');

  if (algorithm !== ALGORITHM) throw bad(`X-Amz-Algorithm only supports "${ALGORITHM}"`);
  if (!/^\d{8}T\d{6}Z$/.test(date)) throw bad('X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd\'T\'HHmmss\'Z\'"');
  const signedAt = Date.UTC(+date.slice(0, 4), +date.slice(4, 6) - 1, +date.slice(6, 8), +date.slice(9, 11), +date.slice(11, 13), +date.slice(13, 15));
  if (Number.isNaN(signedAt) || amzDate(new Date(signedAt)) !== date) throw bad('X-Amz-Date is not a valid date');
  if (!/^\d{1,6}$/.test(expiresRaw)) throw bad('X-Amz-Expires should be a number of seconds');
  const expires = Number(expiresRaw);
  if (expires > MAX_EXPIRES) throw bad(`X-Amz-Expires must be less than a week (in seconds) that is ${MAX_EXPIRES}`);

  const parts = credential.split('/');
  if (parts.length !== 5 || parts[3] !== 's3' || parts[4] !== 'aws4_request' || !/^\d{8}$/.test(parts[1]!)) {
    throw bad('Error parsing the X-Amz-Credential parameter');
  }
  const [accessKey, day, region] = parts as [string, string, string, string, string];
  if (day !== date.slice(0, 8)) throw bad('Error parsing the X-Amz-Credential parameter; the date does not match X-Amz-Date');
  if (region !== input.credentials.region) {
    throw bad(`Error parsing the X-Amz-Credential parameter; the region '${region}' is wrong; expecting '${input.credentials.region}'`);
  }
  if (!safeEqual(accessKey, input.credentials.accessKey)) {
    throw new S3Error('InvalidAccessKeyId', 'The Access Key Id you provided does not exist in our records.');
  }
  if (!/^[0-9a-f]{64}$/.test(signature)) {
    throw new S3Error('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
  }

  const names = signedHeaders.split(';');
  if (!names.includes('host') || names.some((n) => n === '' || n !== n.toLowerCase()) || [...names].sort().join(';') !== signedHeaders) {
    throw bad('X-Amz-SignedHeaders must be a sorted, lower-case list that includes host');
  }
  const headers: Array<[string, string]> = names.map((n) => [n, (n === 'host' ? input.host : input.headers?.[n]) ?? '']);
  if (headers.some(([n, v]) => n === 'host' && v === '')) {
    throw new S3Error('SignatureDoesNotMatch', 'The request has no Host header, which the signature covers.');
  }
  const hostValue = headers.map(([n, v]) => [n, n === 'host' ? v.toLowerCase() : v] as [string, string]);

  const now = input.now.getTime();
  // Expiry first, as S3 does: an expired URL says so even when something else is wrong with it.
  if (signedAt + expires * 1000 < now) throw new S3Error('AccessDenied', 'Request has expired');
  if (signedAt > now + MAX_CLOCK_SKEW_S * 1000) throw new S3Error('AccessDenied', 'Request is not valid yet');

  const scope = `${day}/${region}/s3/aws4_request`;
  const toSign = stringToSign(
    { method: input.method, path: input.path, pairs: pairs.filter(([k]) => k !== 'X-Amz-Signature'), headers: hostValue },
    date,
    scope,
  );
  const expected = createHmac('sha256', signingKey(input.credentials.secretKey, day, region)).update(toSign, 'utf8').digest('hex');
  if (!safeEqual(expected, signature)) {
    throw new S3Error('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
  }
}

/** Constant-time comparison of two strings (of digests of them, so that lengths do not leak either). */
function safeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db) && a === b;
}
