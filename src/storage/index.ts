import type { Config } from '../config/schema.ts';
import { EmbeddedStorage } from './embedded.ts';
import { MinioStorage } from './minio.ts';

export type { ObjectInfo, ObjectRef, ObjectStorage } from './contract.ts';
export { keyProblem, validateKey, MAX_KEY_BYTES } from './contract.ts';
export { EmbeddedStorage, type PutOptions, type SignedRequest } from './embedded.ts';
export { MinioStorage } from './minio.ts';
export { S3Error, renderS3ErrorXml, type S3ErrorCode } from './s3-error.ts';
export { NOT_STORAGE_URL } from './urls.ts';

/** Either driver; narrow on `driver` to reach the embedded store's own extras (verifySignedRequest, putObject). */
export type Storage = EmbeddedStorage | MinioStorage;

export interface StorageOptions {
  /** Clock for signing and verifying URLs (tests inject a fixed one). */
  now?: () => Date;
}

/** The storage driver `storage.driver` names. Constructing one makes no network call and writes nothing. */
export function createStorage(config: Config, opts: StorageOptions = {}): Storage {
  return config.storage.driver === 'minio' ? new MinioStorage(config, opts) : new EmbeddedStorage(config, opts);
}
