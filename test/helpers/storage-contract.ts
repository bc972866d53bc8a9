/**
 * The storage contract suite: one set of tape tests that every driver must pass. A test file calls
 * runContractSuite(name, factory) once per driver (embedded; minio against s3rver; minio against a real MinIO).
 */
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import tapeTest, { type Test } from 'tape';
import type { ObjectStorage } from '../../src/storage/contract.ts';
import { verifyPresigned, type SigV4Credentials } from '../../src/storage/sigv4.ts';

export interface DriverUnderTest {
  storage: ObjectStorage;
  /** The credentials presigned URLs must verify against. */
  credentials: SigV4Credentials;
  /** PUT `body` to a presigned URL as a rig would (a real HTTP PUT, or the embedded route's steps). */
  upload(url: string, body: Buffer): Promise<void>;
  /** GET a presigned URL. */
  download(url: string): Promise<Buffer>;
  /** Whether "p" and "p/q" can both be objects (MinIO refuses a key under an object). */
  parentAndChild: boolean;
  /** Whether key segments longer than 255 bytes work (not on a peer that maps keys to file names). */
  longSegments: boolean;
  /** The etag this driver gives `body`: hex MD5 on S3 and MinIO, hex SHA-256 on the embedded store. */
  etagAlgorithm: 'md5' | 'sha256';
  close(): Promise<void>;
}

export type DriverFactory = () => Promise<DriverUnderTest>;

/** The error `fn` throws or rejects with, or null when it succeeds. */
export async function caught(fn: () => unknown): Promise<(Error & { kind?: string; code?: string }) | null> {
  try {
    await fn();
    return null;
  } catch (err) {
    return err as Error & { kind?: string; code?: string };
  }
}

async function collect(stream: NodeJS.ReadableStream): Promise<{ data: Buffer; chunks: number }> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return { data: Buffer.concat(parts), chunks: parts.length };
}


const etagOf = (d: DriverUnderTest, b: Buffer) => createHash(d.etagAlgorithm).update(b).digest('hex');

function checkSigned(t: Test, d: DriverUnderTest, url: string, method: 'PUT' | 'GET', ttl: number): void {
  const u = new URL(url);
  for (const p of ['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-Expires', 'X-Amz-SignedHeaders', 'X-Amz-Signature']) {
    t.ok(u.searchParams.has(p), `${method} URL carries ${p}`);
  }
  t.equal(u.searchParams.get('X-Amz-Expires'), String(ttl), 'X-Amz-Expires is the ttl');
  const args = { host: u.host, path: u.pathname, query: u.searchParams, credentials: d.credentials, now: new Date() };
  t.doesNotThrow(() => verifyPresigned({ ...args, method }), `${method} URL signature recomputes (SigV4, host ${u.host})`);
  const other = method === 'PUT' ? 'GET' : 'PUT';
  const e = (() => {
    try {
      verifyPresigned({ ...args, method: other });
      return null;
    } catch (err) {
      return err as { s3Code?: string };
    }
  })();
  t.equal(e?.s3Code, 'SignatureDoesNotMatch', `${method} URL does not verify as ${other}`);
}

/**
 * Registers the suite. When the factory fails (the S3 peer cannot start, MinIO cannot be reached),
 * the setup test fails with the factory's reason and every other test of the suite fails naming it,
 * instead of a cascade of TypeErrors on a driver that does not exist.
 */
export function runContractSuite(name: string, factory: DriverFactory): void {
  let d: DriverUnderTest;
  let s: ObjectStorage;
  let setupFailed: string | null = null;
  const test = (title: string, fn: (t: Test) => Promise<void>) =>
    tapeTest(title, async (t) => {
      if (setupFailed !== null) return void t.fail(`not run: the driver under test did not start (${setupFailed})`);
      await fn(t);
    });

  tapeTest(`${name}: setup, ensureBucket (twice), ping`, async (t) => {
    try {
      d = await factory();
    } catch (err) {
      setupFailed = err instanceof Error ? err.message : String(err);
      t.fail(`${name}: the driver under test did not start: ${setupFailed}`);
      return;
    }
    s = d.storage;
    await s.ensureBucket();
    await s.ensureBucket();
    t.equal(await caught(() => s.ping()), null, 'ping resolves');
    t.ok(['embedded', 'minio'].includes(s.driver), `driver is ${s.driver}`);
  });

  test(`${name}: a missing key: stat null, read NotFound`, async (t) => {
    t.equal(await s.stat('no/such/key.db'), null, 'stat gives null');
    const err = await caught(() => s.read('no/such/key.db'));
    t.equal(err?.kind, 'not_found', 'read rejects with NotFound');
  });

  test(`${name}: presigned URLs are path-style object URLs with a valid SigV4 signature`, async (t) => {
    const key = 'rig-7/2024 capture (1).db';
    const put = await s.presignPut(key, 900);
    t.ok(put.startsWith(s.objectUrl(key) + '?'), 'PUT URL = objectUrl(key) + query');
    t.ok(s.objectUrl(key).endsWith(`/${s.bucket}/rig-7/2024%20capture%20%281%29.db`), 'object URL is <base>/<bucket>/<encoded key>');
    checkSigned(t, d, put, 'PUT', 900);
    const get = await s.presignGet(key, 60);
    t.ok(get.startsWith(s.objectUrl(key) + '?'), 'GET URL = objectUrl(key) + query');
    checkSigned(t, d, get, 'GET', 60);
    t.equal((await caught(() => s.presignPut(key, 0)))?.kind, 'invalid', 'ttl 0 refused');
    t.equal((await caught(() => s.presignPut(key, 604801)))?.kind, 'invalid', 'ttl over 7 days refused');
  });

  test(`${name}: upload through a presigned PUT, then stat, read and presigned GET`, async (t) => {
    const key = `uploads/${randomBytes(4).toString('hex')}/capture.sqlite`;
    const body = randomBytes(1024 * 1024 + 17);
    await d.upload(await s.presignPut(key, 300), body);
    const info = await s.stat(key);
    t.equal(info?.size, body.length, 'stat size is the uploaded length');
    t.equal(info?.etag, etagOf(d, body), `etag is the hex ${d.etagAlgorithm} of the content`);
    t.ok(info && Math.abs(info.lastModified.getTime() - Date.now()) < 5 * 60_000, 'lastModified is now');
    const stream = await s.read(key);
    t.equal(typeof stream.pipe, 'function', 'read gives a stream');
    const { data, chunks } = await collect(stream);
    t.ok(data.equals(body), 'read gives the same bytes');
    t.ok(chunks > 1, `the stream arrives in pieces (${chunks} chunks), not as one buffer`);
    t.ok((await d.download(await s.presignGet(key, 300))).equals(body), 'presigned GET gives the same bytes');

    const body2 = Buffer.from('second version');
    await d.upload(await s.presignPut(key, 300), body2);
    const info2 = await s.stat(key);
    t.deepEqual([info2?.size, info2?.etag], [body2.length, etagOf(d, body2)], 'an overwrite replaces size and etag');
    t.ok((await collect(await s.read(key))).data.equals(body2), 'and the content');
  });

  test(`${name}: an empty object`, async (t) => {
    await d.upload(await s.presignPut('empty.log', 60), Buffer.alloc(0));
    const info = await s.stat('empty.log');
    t.equal(info?.size, 0, 'size 0');
    t.equal(info?.etag, etagOf(d, Buffer.alloc(0)), 'etag of nothing');
    t.equal((await collect(await s.read('empty.log'))).data.length, 0, 'reads as nothing');
  });

  test(`${name}: keys with unusual characters round-trip through URLs, stat and read`, async (t) => {
    const keys = [
      'dir/sub dir/über file (1).db',
      "we!rd'*~+=&;,$@:.txt",
      'percent%20literal/%2e%2e',
      'x/日本語/😀.log',
      '...dots/..a/b..',
    ];
    if (d.parentAndChild) keys.push('p', 'p/q');
    if (d.longSegments) keys.push('long/' + 'x'.repeat(300) + '/y');
    for (const key of keys) {
      const body = Buffer.from(`content of ${key}`);
      await d.upload(await s.presignPut(key, 60), body);
    }
    for (const key of keys) {
      const info = await s.stat(key);
      t.equal(info?.etag, etagOf(d, Buffer.from(`content of ${key}`)), `stat ${JSON.stringify(key)}`);
      t.equal((await collect(await s.read(key))).data.toString(), `content of ${key}`, `read ${JSON.stringify(key)}`);
      t.deepEqual(s.parseObjectUrl(s.objectUrl(key)), { bucket: s.bucket, key }, `parseObjectUrl(objectUrl(k)) = k for ${JSON.stringify(key)}`);
    }
  });

  test(`${name}: invalid keys are refused with InvalidInput before any storage call`, async (t) => {
    for (const key of ['', '/lead', 'trail/', 'a//b', 'a/../b', './a', 'nul\0x', 'y'.repeat(1025)]) {
      const errs = await Promise.all([
        caught(() => s.stat(key)),
        caught(() => s.read(key)),
        caught(() => s.presignPut(key, 60)),
        caught(() => s.objectUrl(key)),
      ]);
      t.deepEqual(errs.map((e) => e?.kind), ['invalid', 'invalid', 'invalid', 'invalid'], `key ${JSON.stringify(key.slice(0, 20))}`);
    }
  });

  test(`${name}: parseObjectUrl refuses a few foreign URLs (see object-url.test.ts for all)`, async (t) => {
    const ours = new URL(s.objectUrl('a/b.db'));
    for (const url of [
      `${ours.origin}/other-bucket/a/b.db`,
      `${ours.origin}/${s.bucket}/a/../b.db`,
      `http://169.254.169.254/${s.bucket}/a/b.db`,
    ]) {
      t.equal((await caught(() => s.parseObjectUrl(url)))?.code, 'not_storage_url', url);
    }
  });

  // Teardown, no assertion: the driver's resources go with it.
  test(`${name}: teardown`, async () => {
    await d.close();
  });
}

/** A Readable of `body` (for the embedded store's putObject). */
export function bodyStream(body: Buffer): Readable {
  return Readable.from(body.length ? [body] : []);
}
