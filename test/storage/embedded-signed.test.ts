// The embedded store's signed URLs: generated credentials, presigning identical to MinIO's, and
// verifySignedRequest refusing expired, tampered, moved, re-purposed and re-hosted requests.
import { statSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'minio';
import test from 'tape';
import { CREDENTIALS_FILE, EmbeddedStorage, type SignedRequest } from '../../src/storage/embedded.ts';
import { S3Error, renderS3ErrorXml } from '../../src/storage/s3-error.ts';
import { tempDir, testConfig } from '../helpers/storage.ts';

const tmp = tempDir();
test.onFinish(() => tmp.cleanup());
let clock = new Date('2025-06-01T12:00:00Z');
const store = new EmbeddedStorage(testConfig({ data_dir: tmp.dir, vpn: { host: 'vpn.rigs.internal' }, server: { port: 3000 } }), { now: () => clock });

/** The request a rig makes with `url` (method, path, query, Host header), as the route will hand it over. */
function requestOf(url: string, method: 'PUT' | 'GET'): SignedRequest {
  const u = new URL(url);
  const [, bucket, ...rest] = u.pathname.split('/');
  return { method, bucket: bucket!, key: rest.map(decodeURIComponent).join('/'), query: Object.fromEntries(u.searchParams), host: u.host };
}

function refusal(req: SignedRequest): S3Error | null {
  try {
    store.verifySignedRequest(req);
    return null;
  } catch (err) {
    if (err instanceof S3Error) return err;
    throw err;
  }
}

test('credentials: generated into data_dir with mode 0600, reused by later instances', (t) => {
  const file = path.join(tmp.dir, CREDENTIALS_FILE);
  const creds = store.credentials;
  t.ok(/^[A-Z0-9]{20}$/.test(creds.accessKey), `access key id ${creds.accessKey}`);
  t.ok(creds.secretKey.length >= 40, 'secret of 40 characters');
  t.equal(statSync(file).mode & 0o777, 0o600, 'file mode 0600');
  const again = new EmbeddedStorage(testConfig({ data_dir: tmp.dir })).credentials;
  t.deepEqual(again, creds, 'a second instance on the same data_dir reads the same credentials');
  const other = tempDir();
  const elsewhere = new EmbeddedStorage(testConfig({ data_dir: other.dir })).credentials;
  other.cleanup();
  t.notEqual(elsewhere.secretKey, creds.secretKey, 'another data_dir gets other credentials');
  t.ok(readFileSync(file, 'utf8').includes(creds.secretKey), 'the file holds them');
  t.end();
});

test('presigned URLs are what the minio client makes for the same host, credentials and time', async (t) => {
  const c = store.credentials;
  const client = new Client({ endPoint: 'vpn.rigs.internal', port: 3000, useSSL: false, accessKey: c.accessKey, secretKey: c.secretKey, region: 'us-east-1' });
  for (const key of ['a.db', 'rig 7/ü (1).db']) {
    t.equal(await store.presignPut(key, 900), await client.presignedUrl('PUT', 'captures', key, 900, {}, clock), `PUT ${key}`);
    t.equal(await store.presignGet(key, 60), await client.presignedUrl('GET', 'captures', key, 60, {}, clock), `GET ${key}`);
  }
  t.ok((await store.presignPut('a.db', 900)).startsWith('http://vpn.rigs.internal:3000/captures/a.db?'), 'default public base is http://<vpn.host>:<server.port>');
});

test('verifySignedRequest: a valid PUT and GET pass until they expire', async (t) => {
  clock = new Date('2025-06-01T12:00:00Z');
  const put = requestOf(await store.presignPut('rig-1/a b.db', 900), 'PUT');
  const get = requestOf(await store.presignGet('rig-1/a b.db', 60), 'GET');
  t.equal(refusal(put), null, 'PUT valid now');
  t.equal(refusal(get), null, 'GET valid now');
  clock = new Date('2025-06-01T12:15:00Z');
  t.equal(refusal(put), null, 'PUT valid at 900 s');
  const expiredGet = refusal(get);
  t.deepEqual([expiredGet?.s3Code, expiredGet?.message, expiredGet?.status], ['AccessDenied', 'Request has expired', 403], 'GET expired after 60 s');
  clock = new Date('2025-06-01T12:15:01Z');
  const expiredPut = refusal(put);
  t.deepEqual([expiredPut?.s3Code, expiredPut?.message], ['AccessDenied', 'Request has expired'], 'PUT expired at 901 s');
  clock = new Date('2025-06-01T11:40:00Z');
  t.equal(refusal(put)?.s3Code, 'AccessDenied', 'not valid 20 minutes before it was made (clock skew beyond 15 min)');
  clock = new Date('2025-06-01T12:00:00Z');
});

test('verifySignedRequest: tampered, other key, other method, other host, other bucket, missing parameters', async (t) => {
  clock = new Date('2025-06-01T12:00:00Z');
  const url = await store.presignPut('rig-1/a.db', 900);
  const put = requestOf(url, 'PUT');
  const q = put.query as Record<string, string>;
  const sig = q['X-Amz-Signature']!;
  const flipped = (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1);
  const cases: Array<[string, SignedRequest, string, number]> = [
    ['tampered signature', { ...put, query: { ...q, 'X-Amz-Signature': flipped } }, 'SignatureDoesNotMatch', 403],
    ['lifetime stretched', { ...put, query: { ...q, 'X-Amz-Expires': '604800' } }, 'SignatureDoesNotMatch', 403],
    ['date moved', { ...put, query: { ...q, 'X-Amz-Date': '20250601T120500Z' } }, 'SignatureDoesNotMatch', 403],
    ['URL reused for another key', { ...put, key: 'rig-1/b.db' }, 'SignatureDoesNotMatch', 403],
    ['URL reused for a key in another folder', { ...put, key: 'rig-2/a.db' }, 'SignatureDoesNotMatch', 403],
    ['PUT URL used for GET', { ...put, method: 'GET' }, 'SignatureDoesNotMatch', 403],
    ['other Host header', { ...put, host: '10.144.0.1:3000' }, 'SignatureDoesNotMatch', 403],
    ['other port', { ...put, host: 'vpn.rigs.internal:3001' }, 'SignatureDoesNotMatch', 403],
    ['no Host header', { ...put, host: undefined }, 'SignatureDoesNotMatch', 403],
    ['extra parameter', { ...put, query: { ...q, 'x-id': 'PutObject' } }, 'SignatureDoesNotMatch', 403],
    ['signed with other credentials', { ...put, query: { ...q, 'X-Amz-Credential': q['X-Amz-Credential']!.replace(/^[^/]+/, 'AKIAOTHER') } }, 'InvalidAccessKeyId', 403],
    ['no signature', { ...put, query: { ...q, 'X-Amz-Signature': undefined } as Record<string, string | undefined> }, 'AuthorizationQueryParametersError', 400],
    ['no parameters', { ...put, query: {} }, 'AuthorizationQueryParametersError', 400],
    ['other bucket', { ...put, bucket: 'other' }, 'NoSuchBucket', 404],
    ['invalid key', { ...put, key: 'rig-1/../a.db' }, 'InvalidObjectName', 400],
  ];
  for (const [name, req, code, status] of cases) {
    const err = refusal(req);
    t.deepEqual([err?.s3Code, err?.status], [code, status], `${name}: ${code} ${status}`);
  }
  t.equal(refusal({ ...put, host: 'VPN.RIGS.INTERNAL:3000' }), null, 'Host compared case-insensitively');
});

test('renderS3ErrorXml: an S3-style error body, escaped', (t) => {
  const xml = renderS3ErrorXml(new S3Error('AccessDenied', 'Request has expired'), '/captures/a<b>&"c".db', 'req-1');
  t.equal(
    xml,
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Request has expired</Message>' +
      '<Resource>/captures/a&lt;b&gt;&amp;&quot;c&quot;.db</Resource><RequestId>req-1</RequestId></Error>',
    'body',
  );
  t.ok(!renderS3ErrorXml(new S3Error('NoSuchKey', 'x'), '/a\u0001b').includes('\u0001'), 'control characters never reach the XML');
  const err = new S3Error('SignatureDoesNotMatch', 'm');
  t.deepEqual([err.kind, err.code, err.status], ['forbidden', 'signature_does_not_match', 403], 'also a DomainError');
  t.end();
});

test('public_url with a path prefix: URLs and signatures carry it', async (t) => {
  const prefixed = new EmbeddedStorage(testConfig({ data_dir: tmp.dir, storage: { public_url: 'https://gw.example.org/storage' } }), { now: () => clock });
  const url = await prefixed.presignPut('a.db', 900);
  t.ok(url.startsWith('https://gw.example.org/storage/captures/a.db?'), url);
  const query = Object.fromEntries(new URL(url).searchParams);
  t.doesNotThrow(() => prefixed.verifySignedRequest({ method: 'PUT', bucket: 'captures', key: 'a.db', query, host: 'gw.example.org' }), 'verifies with the prefix');
  t.equal(prefixed.resourcePath('a b.db'), '/storage/captures/a%20b.db', 'resourcePath');
});
