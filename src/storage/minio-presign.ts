/**
 * Signed URLs of the MinIO driver, made for the address rigs reach (`storage.minio.public_endpoint`,
 * else the endpoint; the host is part of the signature). Signed here (sigv4.ts, byte-identical to the
 * `minio` client's presignedUrl: test/storage/sigv4.test.ts), so presigning makes no network call, and
 * an [IPv6] host on the scheme's port keeps its brackets (the client wrote "https://::1/...").
 * A PUT with a size has `content-length` among the signed headers.
 */
import { validateKey, validateTtl, type PresignPutOptions } from './contract.ts';
import { presignUrl, type SigV4Credentials } from './sigv4.ts';
import { resourcePath, type PublicBase } from './urls.ts';

export class MinioPresigner {
  constructor(
    private readonly base: PublicBase,
    private readonly bucket: string,
    private readonly credentials: SigV4Credentials,
    private readonly now: () => Date,
  ) {}

  /**
   * With a size, `content-length` is signed (the minio client signs no header but host): MinIO then
   * takes a PUT of exactly that many bytes, and no other.
   */
  async presignPut(key: string, ttlSeconds: number, opts: PresignPutOptions = {}): Promise<string> {
    return this.presign('PUT', key, ttlSeconds, opts.size === undefined ? {} : { 'content-length': String(opts.size) });
  }

  async presignGet(key: string, ttlSeconds: number): Promise<string> {
    return this.presign('GET', key, ttlSeconds, {});
  }

  private async presign(method: 'PUT' | 'GET', key: string, ttlSeconds: number, headers: Record<string, string>): Promise<string> {
    validateKey(key);
    validateTtl(ttlSeconds);
    return presignUrl({
      method,
      protocol: this.base.protocol,
      host: this.base.host,
      path: resourcePath(this.base, this.bucket, key),
      credentials: this.credentials,
      date: this.now(),
      expires: ttlSeconds,
      headers,
    });
  }
}
