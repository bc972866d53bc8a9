import { createHash } from 'node:crypto';

/** Weak validator: W/" + the first 32 hex digits of the body's SHA-256 + ". */
export function weakEtag(body: string | Buffer): string {
  return `W/"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`;
}
