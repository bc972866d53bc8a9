/**
 * Signed URLs of the MinIO driver, made for the address rigs reach (`storage.minio.public_endpoint`,
 * else the endpoint; the host is part of the signature). A GET, and a PUT without a size, are signed
 * by a `minio` client configured for that address with the region set, so presigning makes no network
 * call; a PUT with a size is signed here with `content-length` among the signed headers.
 *
 * The `minio` package is imported on the first URL, not when the presigner is built.
 */
import type { Client } from 'minio';
import { validateKey, validateTtl, type PresignPutOptions } from './contract.ts';
import { presignUrl, type SigV4Credentials } from './sigv4.ts';
import { bareHostname, resourcePath, type PublicBase } from './urls.ts';

export class MinioPresigner {
  #client: Promise<Client> | undefined;

  constructor(
    private readonly base: PublicBase,
    private readonly bucket: string,
    private readonly credentials: SigV4Credentials,
    private readonly now: () => Date,
  ) {}

  /** The `minio` client that signs for the public address, built on first use. */
  private client(): Promise<Client> {
    this.#client ??= import('minio').then(
      ({ Client }) =>
        new Client({
          endPoint: bareHostname(this.base.hostname),
          port: this.base.port,
          useSSL: this.base.protocol === 'https:',
          accessKey: this.credentials.accessKey,
          secretKey: this.credentials.secretKey,
          region: this.credentials.region,
          pathStyle: true,
        }),
    );
    return this.#client;
  }

  /**
   * With a size, signed here (the minio client signs no header but host) with `content-length` among
   * the signed headers: MinIO then takes a PUT of exactly that many bytes, and no other.
   */
  async presignPut(key: string, ttlSeconds: number, opts: PresignPutOptions = {}): Promise<string> {
    if (opts.size === undefined) return this.presign('PUT', key, ttlSeconds);
    validateKey(key);
    validateTtl(ttlSeconds);
    return presignUrl({
      method: 'PUT',
      protocol: this.base.protocol,
      host: this.base.host,
      path: resourcePath(this.base, this.bucket, key),
      credentials: this.credentials,
      date: this.now(),
      expires: ttlSeconds,
      headers: { 'content-length': String(opts.size) },
    });
  }

  async presignGet(key: string, ttlSeconds: number): Promise<string> {
    return this.presign('GET', key, ttlSeconds);
  }

  private async presign(method: 'PUT' | 'GET', key: string, ttlSeconds: number): Promise<string> {
    validateKey(key);
    validateTtl(ttlSeconds);
    // Region is set, so this computes locally and never waits on the network.
    return (await this.client()).presignedUrl(method, this.bucket, key, ttlSeconds, {}, this.now());
  }
}
