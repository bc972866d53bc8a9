// SigV4 query presigning and verification (src/storage/sigv4.ts): byte-identical to the minio client for
// the same inputs, AWS's published example, and every way a presigned request can be refused.
import { Client } from 'minio';
import test from 'tape';
import { S3Error } from '../../src/storage/s3-error.ts';
import { encodeKeyPath, presignUrl, verifyPresigned, type SigV4Credentials } from '../../src/storage/sigv4.ts';

const DATES = [new Date('2024-03-05T06:07:08.123Z'), new Date('2019-12-31T23:59:59.999Z'), new Date('2030-01-01T00:00:00Z')];
const KEYS = ['capture.db', 'rig-7/2024/a b (1).sqlite', "we!rd'*~+=&?#;,$@:.txt", 'x/日本語/😀.log', 'percent%2Fliteral', '...dots/..a'];
const ENDPOINTS: Array<{ endPoint: string; port: number; useSSL: boolean; host: string; protocol: 'http:' | 'https:' }> = [
  { endPoint: 'vpn.rigs.internal', port: 3000, useSSL: false, host: 'vpn.rigs.internal:3000', protocol: 'http:' },
  { endPoint: '10.144.0.1', port: 9000, useSSL: false, host: '10.144.0.1:9000', protocol: 'http:' },
  { endPoint: 'storage.example.org', port: 80, useSSL: false, host: 'storage.example.org', protocol: 'http:' },
  { endPoint: 'storage.example.org', port: 443, useSSL: true, host: 'storage.example.org', protocol: 'https:' },
  { endPoint: 'Mixed.Case.Example', port: 8443, useSSL: true, host: 'mixed.case.example:8443', protocol: 'https:' },
];
const CREDS: SigV4Credentials[] = [
  { accessKey: 'AKIAIOSFODNN7EXAMPLE', secretKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', region: 'us-east-1' },
  { accessKey: 'RIGDABCDEFGHIJKLMNOP', secretKey: 'c2VjcmV0+with/slashes=', region: 'eu-central-1' },
];

test('presignUrl gives the same bytes as the minio client (PUT and GET, keys, hosts, ports, regions, dates, expiries)', async (t) => {
  let n = 0;
  for (const ep of ENDPOINTS) {
    for (const cred of CREDS) {
      const client = new Client({ endPoint: ep.endPoint, port: ep.port, useSSL: ep.useSSL, accessKey: cred.accessKey, secretKey: cred.secretKey, region: cred.region });
      for (const key of KEYS) {
        for (const date of DATES) {
          for (const expires of [1, 900, 604800]) {
            for (const method of ['PUT', 'GET'] as const) {
              const theirs = await client.presignedUrl(method, 'captures', key, expires, {}, date);
              const ours = presignUrl({ method, protocol: ep.protocol, host: ep.host, path: '/captures/' + encodeKeyPath(key), credentials: cred, date, expires });
              if (ours !== theirs) {
                t.equal(ours, theirs, `${method} ${ep.host} ${key} ${date.toISOString()} ${expires}`);
                return;
              }
              n++;
            }
          }
        }
      }
    }
  }
  t.equal(n, ENDPOINTS.length * CREDS.length * KEYS.length * DATES.length * 3 * 2, `${n} URLs byte-identical to minio's`);
  // presignedGetObject/presignedPutObject are thin wrappers of presignedUrl; check them too.
  const client = new Client({ endPoint: 'vpn.rigs.internal', port: 3000, useSSL: false, accessKey: CREDS[0]!.accessKey, secretKey: CREDS[0]!.secretKey, region: 'us-east-1' });
  const get = await client.presignedGetObject('captures', 'a/b.db', 900, {}, DATES[0]);
  t.equal(
    presignUrl({ method: 'GET', protocol: 'http:', host: 'vpn.rigs.internal:3000', path: '/captures/a/b.db', credentials: CREDS[0]!, date: DATES[0]!, expires: 900 }),
    get,
    'same as presignedGetObject',
  );
  const put = new URL(await client.presignedPutObject('captures', 'a/b.db', 900));
  const d = put.searchParams.get('X-Amz-Date')!;
  const when = new Date(`${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)}T${d.slice(9, 11)}:${d.slice(11, 13)}:${d.slice(13, 15)}Z`);
  t.equal(
    presignUrl({ method: 'PUT', protocol: 'http:', host: 'vpn.rigs.internal:3000', path: '/captures/a/b.db', credentials: CREDS[0]!, date: when, expires: 900 }),
    put.toString(),
    'same as presignedPutObject',
  );
});

test("AWS's documented presigned GET example", (t) => {
  // https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html (virtual-host style, 86400 s)
  const url = presignUrl({
    method: 'GET',
    protocol: 'https:',
    host: 'examplebucket.s3.amazonaws.com',
    path: '/test.txt',
    credentials: CREDS[0]!,
    date: new Date('2013-05-24T00:00:00Z'),
    expires: 86400,
  });
  t.equal(new URL(url).searchParams.get('X-Amz-Signature'), 'aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404', 'signature as published');
  t.end();
});

function refusal(fn: () => void): { code: string | undefined; status: number | undefined; message: string } | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (!(err instanceof S3Error)) throw err;
    return { code: err.s3Code, status: err.status, message: err.message };
  }
}

test('verifyPresigned: accepts minio-made URLs, refuses anything changed', async (t) => {
  const cred = CREDS[1]!;
  const date = new Date('2024-03-05T06:07:08Z');
  const client = new Client({ endPoint: '10.144.0.1', port: 9000, useSSL: false, accessKey: cred.accessKey, secretKey: cred.secretKey, region: cred.region });
  const key = 'rig-7/a b.db';
  const url = new URL(await client.presignedUrl('PUT', 'captures', key, 900, {}, date));
  const base = { method: 'PUT', host: '10.144.0.1:9000', path: '/captures/' + encodeKeyPath(key), credentials: cred };
  const at = (secs: number) => new Date(date.getTime() + secs * 1000);
  const q = (edit: (p: URLSearchParams) => void) => {
    const p = new URLSearchParams(url.searchParams);
    edit(p);
    return p;
  };

  t.equal(refusal(() => verifyPresigned({ ...base, query: url.searchParams, now: at(0) })), null, 'valid at signing time');
  t.equal(refusal(() => verifyPresigned({ ...base, query: url.searchParams, now: at(900) })), null, 'valid at the last second');
  t.equal(refusal(() => verifyPresigned({ ...base, host: '10.144.0.1:9000'.toUpperCase(), query: url.searchParams, now: at(1) })), null, 'host compared case-insensitively');
  const asRecord = Object.fromEntries(url.searchParams.entries());
  t.equal(refusal(() => verifyPresigned({ ...base, query: asRecord, now: at(1) })), null, 'query as a plain object (as hapi gives it)');

  const cases: Array<[string, () => void, string, string?]> = [
    ['expired', () => verifyPresigned({ ...base, query: url.searchParams, now: at(901) }), 'AccessDenied', 'Request has expired'],
    ['not valid yet (beyond 15 min skew)', () => verifyPresigned({ ...base, query: url.searchParams, now: at(-16 * 60) }), 'AccessDenied'],
    ['tampered signature', () => verifyPresigned({ ...base, query: q((p) => p.set('X-Amz-Signature', p.get('X-Amz-Signature')!.replace(/^./, (c) => (c === '0' ? '1' : '0')))), now: at(1) }), 'SignatureDoesNotMatch'],
    ['non-hex signature', () => verifyPresigned({ ...base, query: q((p) => p.set('X-Amz-Signature', 'zz')), now: at(1) }), 'SignatureDoesNotMatch'],
    ['longer expiry', () => verifyPresigned({ ...base, query: q((p) => p.set('X-Amz-Expires', '3600')), now: at(1) }), 'SignatureDoesNotMatch'],
    ['other key', () => verifyPresigned({ ...base, path: '/captures/rig-7/other.db', query: url.searchParams, now: at(1) }), 'SignatureDoesNotMatch'],
    ['other bucket', () => verifyPresigned({ ...base, path: '/other/' + encodeKeyPath(key), query: url.searchParams, now: at(1) }), 'SignatureDoesNotMatch'],
    ['other method (PUT URL used for GET)', () => verifyPresigned({ ...base, method: 'GET', query: url.searchParams, now: at(1) }), 'SignatureDoesNotMatch'],
    ['other host', () => verifyPresigned({ ...base, host: '10.144.0.2:9000', query: url.searchParams, now: at(1) }), 'SignatureDoesNotMatch'],
    ['other port', () => verifyPresigned({ ...base, host: '10.144.0.1:9001', query: url.searchParams, now: at(1) }), 'SignatureDoesNotMatch'],
    ['no Host header', () => verifyPresigned({ ...base, host: undefined, query: url.searchParams, now: at(1) }), 'SignatureDoesNotMatch'],
    ['extra query parameter', () => verifyPresigned({ ...base, query: q((p) => p.set('response-content-type', 'text/html')), now: at(1) }), 'SignatureDoesNotMatch'],
    ['other secret', () => verifyPresigned({ ...base, credentials: { ...cred, secretKey: 'x' }, query: url.searchParams, now: at(1) }), 'SignatureDoesNotMatch'],
    ['other access key', () => verifyPresigned({ ...base, credentials: { ...cred, accessKey: 'SOMEONEELSE' }, query: url.searchParams, now: at(1) }), 'InvalidAccessKeyId'],
    ['other region', () => verifyPresigned({ ...base, credentials: { ...cred, region: 'us-east-1' }, query: url.searchParams, now: at(1) }), 'AuthorizationQueryParametersError'],
    ['no signature', () => verifyPresigned({ ...base, query: q((p) => p.delete('X-Amz-Signature')), now: at(1) }), 'AuthorizationQueryParametersError'],
    ['no credential', () => verifyPresigned({ ...base, query: q((p) => p.delete('X-Amz-Credential')), now: at(1) }), 'AuthorizationQueryParametersError'],
    ['no date', () => verifyPresigned({ ...base, query: q((p) => p.delete('X-Amz-Date')), now: at(1) }), 'AuthorizationQueryParametersError'],
    ['no expiry', () => verifyPresigned({ ...base, query: q((p) => p.delete('X-Amz-Expires')), now: at(1) }), 'AuthorizationQueryParametersError'],
    ['no signed headers', () => verifyPresigned({ ...base, query: q((p) => p.delete('X-Amz-SignedHeaders')), now: at(1) }), 'AuthorizationQueryParametersError'],
    ['no query at all', () => verifyPresigned({ ...base, query: {}, now: at(1) }), 'AuthorizationQueryParametersError'],
    ['other algorithm', () => verifyPresigned({ ...base, query: q((p) => p.set('X-Amz-Algorithm', 'AWS4-HMAC-SHA1')), now: at(1) }), 'AuthorizationQueryParametersError'],
    ['expiry over a week', () => verifyPresigned({ ...base, query: q((p) => p.set('X-Amz-Expires', '604801')), now: at(1) }), 'AuthorizationQueryParametersError'],
    ['negative expiry', () => verifyPresigned({ ...base, query: q((p) => p.set('X-Amz-Expires', '-5')), now: at(1) }), 'AuthorizationQueryParametersError'],
    ['malformed date', () => verifyPresigned({ ...base, query: q((p) => p.set('X-Amz-Date', '20240305T066708Z')), now: at(1) }), 'AuthorizationQueryParametersError'],
    ['duplicated signature', () => verifyPresigned({ ...base, query: q((p) => p.append('X-Amz-Signature', p.get('X-Amz-Signature')!)), now: at(1) }), 'AuthorizationQueryParametersError'],
    ['host not among signed headers', () => verifyPresigned({ ...base, query: q((p) => p.set('X-Amz-SignedHeaders', 'x-amz-date')), now: at(1) }), 'AuthorizationQueryParametersError'],
  ];
  for (const [name, fn, code, message] of cases) {
    const r = refusal(fn);
    t.equal(r?.code, code, `${name}: ${code}`);
    if (message) t.equal(r?.message, message, `${name}: "${message}"`);
  }
  t.equal(refusal(cases[0]![1])?.status, 403, 'expired answers 403');
  t.equal(refusal(cases[2]![1])?.status, 403, 'tampered answers 403');
});

test('presignUrl refuses lifetimes SigV4 does not allow', (t) => {
  for (const expires of [0, -1, 604801, 1.5]) {
    t.throws(
      () => presignUrl({ method: 'PUT', protocol: 'http:', host: 'h', path: '/b/k', credentials: CREDS[0]!, date: new Date(), expires }),
      RangeError,
      `expires ${expires}`,
    );
  }
  t.end();
});
