/**
 * The MinIO driver: the `minio` client (v8). Everything goes to `storage.minio.endpoint:port`; URLs are
 * presigned for `storage.minio.public_endpoint` (the address rigs reach) by minio-presign.ts.
 *
 * Every network call is bounded by `storage.minio.timeout_ms`: a socket that is idle that long is destroyed
 * (connect, headers, or a stalled body), and each call also has an overall deadline. Any failure to reach
 * or use storage becomes Unavailable ('storage_unavailable').
 *
 * The `minio` package (and its XML stack) is imported on the first storage call, not when the driver is
 * built: CLI commands that never touch storage (`rigd user list`) do not pay for loading it.
 */
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import type { Client, ClientOptions } from 'minio';
import type { Config } from '../config/schema.ts';
import { ConfigError, DomainError, NotFound, Unavailable } from '../errors.ts';
import { validateKey, type ObjectInfo, type ObjectRef, type ObjectStorage, type ObjectVersion, type PresignPutOptions } from './contract.ts';
import { MinioPresigner } from './minio-presign.ts';
import type { SigV4Credentials } from './sigv4.ts';
import { bareHostname, buildObjectUrl, parseEndpoint, parseObjectUrlAgainst, type PublicBase } from './urls.ts';

export interface MinioOptions {
  /** Clock for presigning (tests inject a fixed one). */
  now?: () => Date;
}

type Transport = Pick<typeof http, 'request'>;

/**
 * http(s).request with a socket idle timeout: a peer silent for `timeoutMs` (connecting, before the headers,
 * or in the middle of a body) gives an ETIMEDOUT error instead of a hang. A body that is idle only because
 * our own reader is behind (its buffer is full) is not the peer's fault: the timer is re-armed instead.
 */
function timedTransport(base: typeof http | typeof https, timeoutMs: number): Transport {
  const request = (options: http.RequestOptions, callback?: (res: http.IncomingMessage) => void): http.ClientRequest => {
    let response: http.IncomingMessage | undefined;
    const req = base.request({ ...options, timeout: timeoutMs }, (res) => {
      response = res;
      callback?.(res);
    });
    req.on('timeout', () => {
      if (response && !response.complete && response.readableLength >= response.readableHighWaterMark) {
        req.setTimeout(timeoutMs);
        return;
      }
      const err = new Error(`no answer from storage within ${timeoutMs} ms`) as NodeJS.ErrnoException;
      err.code = 'ETIMEDOUT';
      req.destroy(err);
    });
    return req;
  };
  return { request: request as typeof http.request };
}

/** No such object, or no such version of it (expired by a lifecycle rule, removed). */
const NOT_FOUND_CODES = new Set(['NotFound', 'NoSuchKey', 'NoSuchVersion']);

/** What a failed TLS handshake with storage is called in errors (the doctor recognises it). */
export const NO_TLS = 'does not answer TLS';

function errCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export class MinioStorage implements ObjectStorage {
  readonly driver = 'minio' as const;
  readonly bucket: string;
  readonly region: string;
  /** Where rigd talks to MinIO. */
  readonly internal: PublicBase;
  /** Where rigs reach MinIO (the host presigned URLs carry). */
  readonly public: PublicBase;
  private readonly clientOptions: ClientOptions;
  #client: Promise<Client> | undefined;
  private readonly presigner: MinioPresigner;
  private readonly timeoutMs: number;
  private readonly accessKey: string;
  private readonly secretKey: string;

  constructor(config: Config, opts: MinioOptions = {}) {
    const m = config.storage.minio;
    this.bucket = config.storage.bucket;
    this.region = m.region;
    this.timeoutMs = m.timeout_ms;
    this.accessKey = m.access_key;
    this.secretKey = m.secret_key;
    if (!m.access_key || !m.secret_key) {
      throw new ConfigError('config: storage.minio.access_key and storage.minio.secret_key are required with the minio driver');
    }
    this.internal = parseEndpoint(m.endpoint, m.use_ssl, m.port);
    this.public = m.public_endpoint ? parseEndpoint(m.public_endpoint, m.use_ssl) : this.internal;
    this.clientOptions = {
      endPoint: bareHostname(this.internal.hostname),
      port: this.internal.port,
      useSSL: this.internal.protocol === 'https:',
      accessKey: m.access_key,
      secretKey: m.secret_key,
      region: m.region,
      pathStyle: true,
      transport: timedTransport(this.internal.protocol === 'https:' ? https : http, m.timeout_ms),
      // Callers (the upload monitor, the ingester) retry with their own backoff.
      retryOptions: { disableRetry: true },
    };
    this.presigner = new MinioPresigner(this.public, this.bucket, this.credentials, opts.now ?? (() => new Date()));
  }

  /** The minio client, built on first use. */
  private client(): Promise<Client> {
    this.#client ??= import('minio').then(({ Client }) => new Client(this.clientOptions));
    return this.#client;
  }

  /** The credentials URLs are signed with (to verify them independently). */
  get credentials(): SigV4Credentials {
    return { accessKey: this.accessKey, secretKey: this.secretKey, region: this.region };
  }

  /** Runs one storage call under the overall deadline and maps its failures to domain errors. */
  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const work = fn();
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Unavailable(`storage did not answer ${what} within ${this.timeoutMs} ms (${this.where()})`)),
        this.timeoutMs + 250,
      );
    });
    work.catch(() => undefined); // a late failure after the deadline must not become an unhandled rejection
    try {
      return await Promise.race([work, deadline]);
    } catch (err) {
      throw this.mapError(what, err);
    } finally {
      clearTimeout(timer);
    }
  }

  private where(): string {
    return `${this.internal.protocol}//${this.internal.host}`;
  }

  private mapError(what: string, err: unknown): Error {
    if (err instanceof DomainError) return err;
    const code = errCode(err);
    const message = err instanceof Error ? err.message : String(err);
    // OpenSSL's text ("ssl3_get_record:wrong version number" and a source path) says nothing useful to an operator.
    if (this.internal.protocol === 'https:' && (code === 'EPROTO' || code?.startsWith('ERR_SSL_'))) {
      return new Unavailable(`storage ${what} failed: ${this.where()} ${NO_TLS}; it may serve plain HTTP (storage.minio.use_ssl is true)`);
    }
    return new Unavailable(`storage ${what} failed at ${this.where()}: ${code ? `${code}: ` : ''}${message}`);
  }

  async ensureBucket(): Promise<void> {
    const exists = await this.call('bucket check', async () => (await this.client()).bucketExists(this.bucket));
    if (exists) return;
    try {
      await this.call('bucket creation', async () => (await this.client()).makeBucket(this.bucket, this.region));
    } catch (err) {
      // Another process created it in between.
      if (/BucketAlreadyOwnedByYou|BucketAlreadyExists/.test(String((err as Error).message))) return;
      throw err;
    }
  }

  /** ARNs of the webhook (queue) targets the bucket notifies of created objects, from MinIO's bucket notification config. */
  async createdObjectTargets(): Promise<string[]> {
    const conf = await this.call('notification config', async () => (await this.client()).getBucketNotification(this.bucket));
    return (conf.QueueConfiguration ?? [])
      .filter((q) => (q.Event ?? []).some((e) => /^s3:ObjectCreated:(\*|Put)$/.test(e)))
      .map((q) => q.Queue);
  }

  /** Whether the bucket keeps versions (versioning Enabled): a queued capture is then read by its version id. */
  async bucketVersioned(): Promise<boolean> {
    const conf = await this.call('versioning config', async () => (await this.client()).getBucketVersioning(this.bucket));
    return conf?.Status === 'Enabled';
  }

  async bucketExists(): Promise<boolean> {
    return this.call('bucket check', async () => (await this.client()).bucketExists(this.bucket));
  }

  /** Storage answers, accepts the credentials, and the bucket is there (without it every upload and read fails). */
  async ping(): Promise<void> {
    const exists = await this.call('ping', async () => (await this.client()).bucketExists(this.bucket));
    if (!exists) throw new Unavailable(`bucket ${this.bucket} does not exist at ${this.where()} (rigd serve creates it at start; mc mb ALIAS/${this.bucket})`);
  }

  /** With a version id (a versioned bucket), that version; else the current object. */
  async stat(key: string, version?: ObjectVersion): Promise<ObjectInfo | null> {
    validateKey(key);
    const opts = version?.versionId ? { versionId: version.versionId } : {};
    const st = await this.call('stat', async () =>
      (await this.client()).statObject(this.bucket, key, opts).catch((err: unknown) => {
        if (NOT_FOUND_CODES.has(errCode(err) ?? '')) return null;
        throw err;
      }),
    );
    return st && { size: st.size, etag: st.etag, lastModified: st.lastModified, versionId: st.versionId ?? null };
  }

  /**
   * A versioned bucket keeps every version: the hold is the current version's id. An unversioned one
   * keeps none (versionId null): a later PUT replaces the content, and its capture fails object_changed.
   */
  async hold(key: string, etag: string, versionId?: string | null): Promise<{ versionId: string | null } | null> {
    const st = await this.stat(key, versionId ? { etag, versionId } : undefined);
    if (!st || st.etag !== etag) return null;
    return { versionId: st.versionId ?? null };
  }

  async release(): Promise<void> {
    // Versions are the bucket's to keep (its lifecycle rules); nothing is held here.
  }

  /**
   * The body as a stream whose failures are storage's: a body that stalls past the timeout or breaks
   * off (MinIO stopped, a reset) errors with Unavailable, as a call that gets no answer does.
   */
  async read(key: string, version?: ObjectVersion): Promise<Readable> {
    validateKey(key);
    const opts = version?.versionId ? { versionId: version.versionId } : {};
    const body = await this.call('read', async () =>
      (await this.client()).getObject(this.bucket, key, opts).catch((err: unknown) => {
        if (NOT_FOUND_CODES.has(errCode(err) ?? '')) throw new NotFound('object');
        throw err;
      }),
    );
    const mapError = (err: unknown) => this.mapError('read (in the body)', err);
    async function* chunks(): AsyncGenerator<Buffer> {
      try {
        for await (const chunk of body) yield chunk as Buffer;
      } catch (err) {
        throw mapError(err);
      }
    }
    return Readable.from(chunks(), { objectMode: false });
  }

  presignPut(key: string, ttlSeconds: number, opts: PresignPutOptions = {}): Promise<string> {
    return this.presigner.presignPut(key, ttlSeconds, opts);
  }

  presignGet(key: string, ttlSeconds: number): Promise<string> {
    return this.presigner.presignGet(key, ttlSeconds);
  }

  objectUrl(key: string): string {
    validateKey(key);
    return buildObjectUrl(this.public, this.bucket, key);
  }

  parseObjectUrl(url: string): ObjectRef {
    return parseObjectUrlAgainst(url, this.public === this.internal ? [this.public] : [this.public, this.internal], this.bucket);
  }
}
