/**
 * What never reaches a log line: tokens, passwords, cookies and credentials in URLs. Fields are
 * removed by pino's `redact` paths (replaced by "[Redacted]"); a URL keeps its shape with only the
 * password masked (`postgres://rigd:[Redacted]@db/rigd`), which a path cannot do, so a formatter
 * step rewrites string values that carry `scheme://user:password@`.
 */

export const CENSOR = '[Redacted]';

/** Keys that carry a secret wherever they appear at the top of a line or one level down. */
const SECRET_KEYS = ['password', 'new_password', 'current_password', 'token', 'session_token', 'webhook_token', 'cookie_secret', 'secret_key', 'access_token', 'authorization', 'cookie'];

export const REDACT_PATHS: string[] = [
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((k) => `*.${k}`),
  'headers["set-cookie"]',
  'payload.data.token',
  'response.data.token',
  'response_headers["set-cookie"]',
  'headers["x-amz-security-token"]',
  'query["X-Amz-Signature"]',
  'query["X-Amz-Credential"]',
];

const URL_CREDENTIALS = /([a-z][a-z0-9+.-]*:\/\/)([^\s/@:]*):([^\s/@]+)@/gi;

/** `scheme://user:password@host` -> `scheme://user:[Redacted]@host`; other text unchanged. */
export function maskUrlCredentials(text: string): string {
  if (!text.includes('@')) return text;
  return text.replace(URL_CREDENTIALS, `$1$2:${CENSOR}@`);
}

function maskValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return maskUrlCredentials(value);
  if (depth > 0 && value !== null && typeof value === 'object' && !Array.isArray(value)) return maskFields(value as Record<string, unknown>, depth - 1);
  return value;
}

/** The line's fields with URL credentials masked in strings (two levels deep); key order kept. */
export function maskFields(obj: Record<string, unknown>, depth = 2): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(obj)) {
    const before = obj[key];
    const after = maskValue(before, depth);
    if (after !== before) {
      out ??= { ...obj };
      out[key] = after;
    }
  }
  return out ?? obj;
}
