/**
 * The embedded object store: objects on local disk under `<data_dir>/objects/`, served by rigd itself
 * (path-style, SigV4-presigned PUT and GET, like MinIO) so that a fresh install needs no other server.
 *
 * Layout, per bucket: `objects/<bucket>/<h[0..2]>/<h>.json` is the sidecar (key, size, etag, Content-Type,
 * mtime and the name of the data file; object-records.ts), `<h>.<random>.data` the content, where h = SHA-256 of (bucket, key). Hashing makes
 * every valid S3 key storable (both "a" and "a/b", segments longer than NAME_MAX, any characters).
 * The sidecar is the commit record: a PUT streams into `objects/.tmp/` (temp-files.ts), fsyncs, renames the data file in,
 * then atomically renames a new sidecar over the old one, fsyncs the directory and only then unlinks the
 * old data file. Readers go through the sidecar, so they see the old object or the new one, never a mix.
 */
import { access, constants, mkdir, open, rm, stat as fsStat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Config } from '../config/schema.ts';
import { DomainError, InvalidInput, NotFound, Unavailable } from '../errors.ts';
import { keyProblem, validateKey, validateTtl, type ObjectInfo, type ObjectRef, type ObjectStorage, type PresignPutOptions } from './contract.ts';
import { consumeBytes, type ByteSource } from './byte-source.ts';
import { EMBEDDED_REGION, loadOrCreateCredentials } from './credentials.ts';
import { ObjectFileWriter, type WrittenFile } from './object-file-writer.ts';
import { notThere, ObjectRecords } from './object-records.ts';
import { S3Error } from './s3-error.ts';
import { presignUrl, verifyPresigned, type QueryInput, type SigV4Credentials } from './sigv4.ts';
import { sweepOrphans, tempName } from './temp-files.ts';
import { buildObjectUrl, parseBase, parseObjectUrlAgainst, resourcePath, type PublicBase } from './urls.ts';

export { S3Error, renderS3ErrorXml, type S3ErrorCode } from './s3-error.ts';

export { CREDENTIALS_FILE, EMBEDDED_REGION, loadOrCreateCredentials } from './credentials.ts';

export interface EmbeddedOptions {
  /** Clock for signing and verifying URLs (tests inject a fixed one). */
  now?: () => Date;
}

export interface SignedRequest {
  method: 'PUT' | 'GET' | 'HEAD';
  bucket: string;
  /** The object key, decoded from the request path. */
  key: string;
  /** The request's decoded query parameters. */
  query: QueryInput;
  /** The request's Host header as received. */
  host: string | undefined;
  /** Other headers, by lower-case name, in case a client signed more than host. */
  headers?: Record<string, string | undefined>;
}

export interface PutOptions {
  /** The exact number of bytes the upload must have (the reserved size). */
  expectedSize: number;
  /** Called as bytes are written, with the total so far. */
  onProgress?: (bytesSoFar: number) => void;
  /**
   * On a refusal, leave a stream source paused but open (its owner still answers on it, e.g. an
   * HTTP request whose client must read the error). By default the source is destroyed.
   */
  leaveSourceOnError?: boolean;
  /** Aborting it stops the PUT at once (nothing stored); the PUT rejects with its reason. */
  signal?: AbortSignal;
  /** The Content-Type the client sent, returned on GET (default application/octet-stream). */
  contentType?: string;
}

/** Query parameter of a signed PUT URL naming its upload reservation (signed with the rest). */
export const RESERVATION_PARAM = 'reservation';

/** What a GET of an object answers with when its PUT named no type (as S3 and MinIO do). */
export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

export function defaultPublicUrl(config: Config): string {
  return config.storage.public_url || `http://${config.vpn.host}:${config.server.port}`;
}

export class EmbeddedStorage implements ObjectStorage {
  readonly driver = 'embedded' as const;
  readonly bucket: string;
  readonly region = EMBEDDED_REGION;
  /** Public base URL rigs reach, e.g. http://vpn.rigs.internal:3000. */
  readonly publicUrl: string;
  /** `<data_dir>/objects` */
  readonly root: string;
  private readonly dataDir: string;
  private readonly base: PublicBase;
  private readonly now: () => Date;
  private creds: SigV4Credentials | undefined;
  private readonly records: ObjectRecords;
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(config: Config, opts: EmbeddedOptions = {}) {
    this.bucket = config.storage.bucket;
    this.dataDir = path.resolve(config.data_dir);
    this.root = path.join(this.dataDir, 'objects');
    this.publicUrl = defaultPublicUrl(config).replace(/\/+$/, '');
    this.base = parseBase(this.publicUrl);
    this.now = opts.now ?? (() => new Date());
    this.records = new ObjectRecords(this.root, this.bucket, this.tmpDir);
  }

  /**
   * The access key id and secret this store signs with: generated into `<data_dir>/storage-credentials.json`
   * (mode 0600) on first use, and reused after that, by this and every other process on the same data_dir.
   */
  get credentials(): SigV4Credentials {
    this.creds ??= loadOrCreateCredentials(this.dataDir);
    return this.creds;
  }

  private get tmpDir(): string {
    return path.join(this.root, '.tmp');
  }

  async ensureBucket(): Promise<void> {
    try {
      await mkdir(path.join(this.root, this.bucket), { recursive: true });
      await mkdir(this.tmpDir, { recursive: true });
    } catch (err) {
      throw new Unavailable(`embedded storage: cannot create ${this.root}: ${(err as Error).message}`);
    }
    // Leftovers of PUTs whose process is gone (a crash, a kill): never one a live process still writes.
    await sweepOrphans(this.tmpDir);
  }

  async bucketExists(): Promise<boolean> {
    const st = await fsStat(path.join(this.root, this.bucket)).catch(() => null);
    return st !== null && st.isDirectory();
  }

  async ping(): Promise<void> {
    try {
      await mkdir(this.root, { recursive: true });
      await access(this.root, constants.R_OK | constants.W_OK | constants.X_OK);
      void this.credentials;
    } catch (err) {
      throw new Unavailable(`embedded storage at ${this.root} is not usable: ${(err as Error).message}`);
    }
  }

  objectUrl(key: string): string {
    validateKey(key);
    return buildObjectUrl(this.base, this.bucket, key);
  }

  /** The URL path of `key` (what its signature covers), e.g. for the Resource of an S3 error body. */
  resourcePath(key: string): string {
    return resourcePath(this.base, this.bucket, key);
  }

  parseObjectUrl(url: string): ObjectRef {
    return parseObjectUrlAgainst(url, [this.base], this.bucket);
  }

  async presignPut(key: string, ttlSeconds: number, opts: PresignPutOptions = {}): Promise<string> {
    const bound = opts.reservation === undefined ? undefined : { [RESERVATION_PARAM]: String(opts.reservation) };
    return this.presign('PUT', key, ttlSeconds, bound);
  }

  async presignGet(key: string, ttlSeconds: number): Promise<string> {
    return this.presign('GET', key, ttlSeconds);
  }

  private presign(method: 'PUT' | 'GET', key: string, ttlSeconds: number, query?: Record<string, string>): string {
    validateKey(key);
    validateTtl(ttlSeconds);
    return presignUrl({
      method,
      protocol: this.base.protocol,
      host: this.base.host,
      path: this.resourcePath(key),
      credentials: this.credentials,
      date: this.now(),
      expires: ttlSeconds,
      query,
    });
  }

  /**
   * Checks a presigned PUT or GET to this store. Throws S3Error (its `s3Code` and `status` are what to
   * answer, with {@link renderS3ErrorXml}): AccessDenied when expired, SignatureDoesNotMatch when anything
   * signed differs (key, method, host, query), AuthorizationQueryParametersError when parameters are
   * missing or malformed, NoSuchBucket for another bucket.
   */
  verifySignedRequest(req: SignedRequest): void {
    if (req.bucket !== this.bucket) throw new S3Error('NoSuchBucket', 'The specified bucket does not exist');
    const problem = keyProblem(req.key);
    if (problem !== null) throw new S3Error('InvalidObjectName', problem);
    verifyPresigned({
      method: req.method,
      host: req.host,
      path: this.resourcePath(req.key),
      query: req.query,
      credentials: this.credentials,
      now: this.now(),
      headers: req.headers,
    });
  }

  async stat(key: string): Promise<ObjectInfo | null> {
    validateKey(key);
    const found = await this.records.read(key);
    if (!found) return null;
    const { size, etag, mtime, type } = found.meta;
    return { size, etag, lastModified: new Date(mtime), contentType: type ?? DEFAULT_CONTENT_TYPE };
  }

  async read(key: string): Promise<Readable> {
    validateKey(key);
    // A concurrent overwrite may unlink the data file between reading the sidecar and opening: read again.
    for (let attempt = 0; attempt < 5; attempt++) {
      const found = await this.records.read(key);
      if (!found) throw new NotFound('object');
      let fh: FileHandle;
      try {
        fh = await open(path.join(found.dir, found.meta.data), 'r');
      } catch (err) {
        if (notThere(err)) continue;
        throw new Unavailable(`embedded storage: cannot open object: ${(err as Error).message}`);
      }
      return fh.createReadStream({ autoClose: true });
    }
    throw new Unavailable('embedded storage: object kept changing while being opened');
  }

  /** Runs `fn` after every earlier holder of the same lock name is done (in this process). */
  private async withLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(name) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.locks.set(name, tail);
    try {
      return await run;
    } finally {
      if (this.locks.get(name) === tail) this.locks.delete(name);
    }
  }

  /**
   * Stores the bytes of `source` as `key`, which must be exactly `expectedSize` bytes long. Streams to a
   * temp file (memory stays flat), stops reading as soon as more than expectedSize bytes arrived
   * (S3Error EntityTooLarge), refuses a short body (S3Error IncompleteBody). Only a complete body becomes
   * visible, atomically; a refused or failed PUT leaves no temp file and never touches an existing object.
   * The etag is the hex SHA-256 of the content (see README, "Uploads").
   */
  async putObject(key: string, source: ByteSource, opts: PutOptions): Promise<ObjectInfo> {
    validateKey(key);
    const { expectedSize, onProgress } = opts;
    if (!Number.isSafeInteger(expectedSize) || expectedSize < 0) {
      throw new InvalidInput('expected size must be a whole number of bytes', [{ field: 'size', message: 'must be >= 0' }]);
    }
    const tmp = path.join(this.tmpDir, tempName('part'));
    let writer: ObjectFileWriter | undefined;
    try {
      try {
        await mkdir(this.tmpDir, { recursive: true });
        writer = await ObjectFileWriter.create(tmp);
      } catch (err) {
        throw new Unavailable(`embedded storage: cannot create a temp file: ${(err as Error).message}`);
      }
      const file = writer;
      let received = 0;
      await consumeBytes(source, opts.leaveSourceOnError === true, (chunk) => {
        received += chunk.length;
        if (received > expectedSize) throw new S3Error('EntityTooLarge', `The upload is longer than the reserved ${expectedSize} bytes`);
        const taken = file.write(chunk);
        onProgress?.(received);
        return taken;
      }, opts.signal);
      if (received !== expectedSize) {
        throw new S3Error('IncompleteBody', `The upload has ${received} bytes, not the reserved ${expectedSize}`);
      }
      let written: WrittenFile;
      try {
        written = await file.finish();
      } catch (err) {
        throw new Unavailable(`embedded storage: cannot write: ${(err as Error).message}`);
      }
      if (written.size !== received) throw new Unavailable(`embedded storage: ${written.size} of ${received} bytes were written`);
      const type = opts.contentType || DEFAULT_CONTENT_TYPE;
      return await this.withLock(key, () => this.records.publish(key, tmp, { size: written.size, etag: written.sha256, type }, this.now().getTime()));
    } catch (err) {
      await writer?.abort();
      await rm(tmp, { force: true }).catch(() => undefined);
      if (err instanceof DomainError) throw err;
      throw new Unavailable(`embedded storage: ${(err as Error).message}`);
    }
  }


}
