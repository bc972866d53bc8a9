import { DomainError, type ErrorKind } from '../errors.ts';

/** S3 error codes the embedded store answers with (a subset of S3's, same meaning). */
export type S3ErrorCode =
  | 'AccessDenied'
  | 'SignatureDoesNotMatch'
  | 'AuthorizationQueryParametersError'
  | 'InvalidAccessKeyId'
  | 'NoSuchBucket'
  | 'NoSuchKey'
  | 'InvalidObjectName'
  | 'IncompleteBody'
  | 'EntityTooLarge'
  | 'EntityTooSmall'
  | 'RequestTimeout'
  | 'XMinioStorageFull'
  | 'InternalError';

const STATUS: Record<S3ErrorCode, number> = {
  AccessDenied: 403,
  SignatureDoesNotMatch: 403,
  AuthorizationQueryParametersError: 400,
  InvalidAccessKeyId: 403,
  NoSuchBucket: 404,
  NoSuchKey: 404,
  InvalidObjectName: 400,
  IncompleteBody: 400,
  EntityTooLarge: 400,
  EntityTooSmall: 400,
  RequestTimeout: 400,
  // MinIO's answer when a drive is under its free-space threshold.
  XMinioStorageFull: 507,
  InternalError: 500,
};

const KIND: Record<S3ErrorCode, ErrorKind> = {
  AccessDenied: 'forbidden',
  SignatureDoesNotMatch: 'forbidden',
  AuthorizationQueryParametersError: 'invalid',
  InvalidAccessKeyId: 'forbidden',
  NoSuchBucket: 'not_found',
  NoSuchKey: 'not_found',
  InvalidObjectName: 'invalid',
  IncompleteBody: 'invalid',
  EntityTooLarge: 'too_large',
  EntityTooSmall: 'invalid',
  RequestTimeout: 'invalid',
  XMinioStorageFull: 'insufficient_storage',
  InternalError: 'unavailable',
};

/**
 * An error of the S3 wire protocol, for the embedded store's own HTTP route: `s3Code` and `status` are
 * what S3 (and MinIO) answer; render the body with {@link renderS3ErrorXml}. It is also a DomainError, so
 * code that does not speak S3 can treat it like any other (`code` is the snake_case form of `s3Code`).
 */
export class S3Error extends DomainError {
  override name = 'S3Error';
  readonly status: number;
  constructor(
    readonly s3Code: S3ErrorCode,
    message: string,
  ) {
    super(KIND[s3Code], s3Code.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase(), message);
    this.status = STATUS[s3Code];
  }
}

function xmlEscape(s: string): string {
  // XML 1.0 has no form for most control characters, even escaped: replace them.
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]/g, '\ufffd').replace(/[<>&'"]/g, (c) => `&${{ '<': 'lt', '>': 'gt', '&': 'amp', "'": 'apos', '"': 'quot' }[c]};`);
}

/** The S3-style XML error body (Content-Type application/xml) for `err` on `resource` (e.g. "/captures/a/b.db"). */
export function renderS3ErrorXml(err: S3Error, resource: string, requestId = ''): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${xmlEscape(err.s3Code)}</Code><Message>${xmlEscape(err.message)}</Message>` +
    `<Resource>${xmlEscape(resource)}</Resource><RequestId>${xmlEscape(requestId)}</RequestId></Error>`
  );
}
