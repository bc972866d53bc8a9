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
import { validateKey, type ObjectInfo, type ObjectRef, type ObjectStorage, type ObjectVersion, type PresignPutOptions } from './contract.ts';
import type { ByteSource } from './byte-source.ts';
import { EMBEDDED_REGION, loadOrCreateCredentials } from './credentials.ts';
import { writeTempObject, type PutOptions } from './embedded-put.ts';
import { defaultPublicUrl, EmbeddedUrls, RESERVATION_PARAM, type SignedRequest } from './embedded-urls.ts';
import { HeldVersions } from './held-versions.ts';
import { KeyLocks } from './key-locks.ts';
import { notThere, ObjectRecords } from './object-records.ts';
import type { SigV4Credentials } from './sigv4.ts';
import { sweepOrphans, tempName } from './temp-files.ts';

export { S3Error, renderS3ErrorXml, type S3ErrorCode } from './s3-error.ts';
export { CREDENTIALS_FILE, EMBEDDED_REGION, loadOrCreateCredentials } from './credentials.ts';
export { defaultPublicUrl, RESERVATION_PARAM, type SignedRequest } from './embedded-urls.ts';
export type { PutOptions } from './embedded-put.ts';

export interface EmbeddedOptions {
  /** Clock for signing and verifying URLs (tests inject a fixed one). */
  now?: () => Date;
}

/** What a GET of an object answers with when its PUT named no type (as S3 and MinIO do). */
export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

export class EmbeddedStorage implements ObjectStorage {
  readonly driver = 'embedded' as const;
  readonly bucket: string;
  readonly region = EMBEDDED_REGION;
  /** Public base URL rigs reach, e.g. http://vpn.rigs.internal:3000. */
  publicUrl: string;
  /** The default public URL follows the port the server listens on (server.port 0: the kernel's pick). */
  private readonly followsServerPort: boolean;
  private readonly vpnHost: string;
  /** `<data_dir>/objects` */
  readonly root: string;
  private readonly dataDir: string;
  private readonly now: () => Date;
  private creds: SigV4Credentials | undefined;
  private readonly records: ObjectRecords;
  private urls: EmbeddedUrls;
  private readonly locks = new KeyLocks();
  private readonly held: HeldVersions;

  constructor(config: Config, opts: EmbeddedOptions = {}) {
    this.bucket = config.storage.bucket;
    this.dataDir = path.resolve(config.data_dir);
    this.root = path.join(this.dataDir, 'objects');
    this.publicUrl = defaultPublicUrl(config).replace(/\/+$/, '');
    this.now = opts.now ?? (() => new Date());
    this.urls = new EmbeddedUrls(this.publicUrl, this.bucket, () => this.credentials, this.now);
    this.followsServerPort = !config.storage.public_url && config.server.port === 0;
    this.vpnHost = config.vpn.host;
    this.records = new ObjectRecords(this.root, this.bucket, this.tmpDir);
    this.held = new HeldVersions(this.root, this.bucket, this.records);
  }

  /**
   * The server listens on `port`: with server.port 0 and no storage.public_url, the URLs rigs get name
   * that port (the default public URL is http://<vpn.host>:<server.port>, and 0 is no port to reach).
   */
  servedOn(port: number): void {
    if (!this.followsServerPort) return;
    this.publicUrl = `http://${this.vpnHost}:${port}`;
    this.urls = new EmbeddedUrls(this.publicUrl, this.bucket, () => this.credentials, this.now);
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
    return this.urls.objectUrl(key);
  }

  /** The URL path of `key` (what its signature covers), e.g. for the Resource of an S3 error body. */
  resourcePath(key: string): string {
    return this.urls.resourcePath(key);
  }

  parseObjectUrl(url: string): ObjectRef {
    return this.urls.parseObjectUrl(url);
  }

  async presignPut(key: string, ttlSeconds: number, opts: PresignPutOptions = {}): Promise<string> {
    const bound = opts.reservation === undefined ? undefined : { [RESERVATION_PARAM]: String(opts.reservation) };
    return this.urls.presign('PUT', key, ttlSeconds, bound);
  }

  async presignGet(key: string, ttlSeconds: number): Promise<string> {
    return this.urls.presign('GET', key, ttlSeconds);
  }

  /** Checks a presigned PUT or GET to this store; throws S3Error (see EmbeddedUrls.verify). */
  verifySignedRequest(req: SignedRequest): void {
    this.urls.verify(req);
  }

  async stat(key: string, version?: ObjectVersion): Promise<ObjectInfo | null> {
    validateKey(key);
    const found = await this.records.read(key);
    if (version && found?.meta.etag !== version.etag) {
      const held = await this.held.stat(key, version.etag);
      if (held) return held;
    }
    if (!found) return null;
    const { size, etag, mtime, type } = found.meta;
    return { size, etag, lastModified: new Date(mtime), contentType: type ?? DEFAULT_CONTENT_TYPE };
  }

  /** Keeps the current content of `key` readable (stat and read with its etag) until release, if its etag is `etag`. */
  async hold(key: string, etag: string): Promise<{ versionId: null } | null> {
    validateKey(key);
    return (await this.locks.run(key, () => this.held.hold(key, etag))) ? { versionId: null } : null;
  }

  async release(key: string, version: ObjectVersion): Promise<void> {
    validateKey(key);
    await this.held.release(key, version.etag);
  }

  async linkHeld(key: string, version: ObjectVersion, file: string): Promise<boolean> {
    validateKey(key);
    return this.held.linkTo(key, version.etag, file);
  }

  async read(key: string, version?: ObjectVersion): Promise<Readable> {
    validateKey(key);
    if (version) {
      const current = await this.records.read(key);
      if (current?.meta.etag !== version.etag) {
        const held = await this.held.open(key, version.etag);
        if (held) return held;
      }
    }
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

  /**
   * Stores the bytes of `source` as `key`, which must be exactly `expectedSize` bytes long. Streams to a
   * temp file (memory stays flat), stops reading as soon as more than expectedSize bytes arrived
   * (S3Error EntityTooLarge), refuses a short body (S3Error IncompleteBody). Only a complete body becomes
   * visible, atomically; a refused or failed PUT leaves no temp file and never touches an existing object.
   * The etag is the hex SHA-256 of the content (see README, "Uploads").
   */
  async putObject(key: string, source: ByteSource, opts: PutOptions): Promise<ObjectInfo> {
    validateKey(key);
    const { expectedSize } = opts;
    if (!Number.isSafeInteger(expectedSize) || expectedSize < 0) {
      throw new InvalidInput('expected size must be a whole number of bytes', [{ field: 'size', message: 'must be >= 0' }]);
    }
    const tmp = path.join(this.tmpDir, tempName('part'));
    try {
      const written = await writeTempObject(this.tmpDir, tmp, source, opts);
      const type = opts.contentType || DEFAULT_CONTENT_TYPE;
      return await this.locks.run(key, () => this.records.publish(key, tmp, { size: written.size, etag: written.sha256, type }, this.now().getTime()));
    } catch (err) {
      await rm(tmp, { force: true }).catch(() => undefined);
      if (err instanceof DomainError) throw err;
      throw new Unavailable(`embedded storage: ${(err as Error).message}`);
    }
  }
}
