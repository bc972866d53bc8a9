/**
 * The embedded store's URLs: path-style object URLs on the public base rigs reach, presigned (SigV4,
 * like MinIO) and verified with the store's own credentials.
 */
import type { Config } from '../config/schema.ts';
import { keyProblem, validateKey, validateTtl, type ObjectRef } from './contract.ts';
import { S3Error } from './s3-error.ts';
import { presignUrl, verifyPresigned, type QueryInput, type SigV4Credentials } from './sigv4.ts';
import { buildObjectUrl, parseBase, parseObjectUrlAgainst, resourcePath, type PublicBase } from './urls.ts';

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

/** Query parameter of a signed PUT URL naming its upload reservation (signed with the rest). */
export const RESERVATION_PARAM = 'reservation';

export function defaultPublicUrl(config: Config): string {
  return config.storage.public_url || `http://${config.vpn.host}:${config.server.port}`;
}

export class EmbeddedUrls {
  readonly #base: PublicBase;

  /** credentials is asked on each use: they are created on first use (credentials.ts). */
  constructor(
    publicUrl: string,
    private readonly bucket: string,
    private readonly credentials: () => SigV4Credentials,
    private readonly now: () => Date,
  ) {
    this.#base = parseBase(publicUrl);
  }

  objectUrl(key: string): string {
    validateKey(key);
    return buildObjectUrl(this.#base, this.bucket, key);
  }

  /** The URL path of `key` (what its signature covers), e.g. for the Resource of an S3 error body. */
  resourcePath(key: string): string {
    return resourcePath(this.#base, this.bucket, key);
  }

  parseObjectUrl(url: string): ObjectRef {
    return parseObjectUrlAgainst(url, [this.#base], this.bucket);
  }

  presign(method: 'PUT' | 'GET', key: string, ttlSeconds: number, query?: Record<string, string>): string {
    validateKey(key);
    validateTtl(ttlSeconds);
    return presignUrl({
      method,
      protocol: this.#base.protocol,
      host: this.#base.host,
      path: this.resourcePath(key),
      credentials: this.credentials(),
      date: this.now(),
      expires: ttlSeconds,
      query,
    });
  }

  /**
   * Checks a presigned PUT or GET to this store. Throws S3Error (its `s3Code` and `status` are what to
   * answer, with renderS3ErrorXml): AccessDenied when expired, SignatureDoesNotMatch when anything
   * signed differs (key, method, host, query), AuthorizationQueryParametersError when parameters are
   * missing or malformed, NoSuchBucket for another bucket.
   */
  verify(req: SignedRequest): void {
    if (req.bucket !== this.bucket) throw new S3Error('NoSuchBucket', 'The specified bucket does not exist');
    const problem = keyProblem(req.key);
    if (problem !== null) throw new S3Error('InvalidObjectName', problem);
    verifyPresigned({
      method: req.method,
      host: req.host,
      path: this.resourcePath(req.key),
      query: req.query,
      credentials: this.credentials(),
      now: this.now(),
      headers: req.headers,
    });
  }
}
