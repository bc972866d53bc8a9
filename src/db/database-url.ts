/**
 * The database.url setting: empty means SQLite in data_dir; postgres:// or postgresql:// means a
 * PostgreSQL server. redactUrl() is the one way such a URL (or any text that may contain it) is
 * printed: logs, `rigd doctor`, error lines. A password never leaves the process in text.
 */

/** The URL schemes database.url takes. */
export const POSTGRES_SCHEMES = ['postgres:', 'postgresql:'];

/** True when url names a PostgreSQL server (an empty url is SQLite). */
export function isPostgresUrl(url: string | undefined): url is string {
  if (!url) return false;
  try {
    return POSTGRES_SCHEMES.includes(new URL(url).protocol);
  } catch {
    return false;
  }
}

/** Why url is not a usable database.url, or null when it is (empty included). */
export function databaseUrlProblem(url: string): string | null {
  if (url === '') return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a URL (expected empty for SQLite in data_dir, or postgres://user:password@host:5432/database)';
  }
  if (!POSTGRES_SCHEMES.includes(parsed.protocol)) {
    return `has scheme ${parsed.protocol.replace(/:$/, '')} (expected empty for SQLite in data_dir, or postgres:// / postgresql://)`;
  }
  if (parsed.pathname.replace(/^\//, '') === '') return 'names no database (expected postgres://user:password@host:5432/database)';
  return null;
}

const PASSWORD_MASK = '***';

/** url with its password (and a password= query parameter) replaced by ***; text that is not a URL is returned as it is. */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return redactText(url);
  }
  if (parsed.password) parsed.password = PASSWORD_MASK;
  if (parsed.searchParams.has('password')) parsed.searchParams.set('password', PASSWORD_MASK);
  return parsed.toString().replace(encodeURIComponent(PASSWORD_MASK), PASSWORD_MASK).replace(/%2A%2A%2A/g, PASSWORD_MASK);
}

/**
 * text with the password of every postgres URL in it, and any literal secret given, replaced by ***.
 * For error messages from the driver, which may quote the connection string.
 */
export function redactText(text: string, ...secrets: (string | undefined)[]): string {
  let out = text.replace(/(postgres(?:ql)?:\/\/[^:/@\s]*:)([^@\s]*)@/gi, `$1${PASSWORD_MASK}@`);
  out = out.replace(/(password=)([^&\s]+)/gi, `$1${PASSWORD_MASK}`);
  for (const s of secrets) if (s) out = out.split(s).join(PASSWORD_MASK);
  return out;
}

/** The password of url, decoded, or undefined. */
export function passwordOf(url: string): string | undefined {
  try {
    const p = new URL(url).password;
    return p ? decodeURIComponent(p) : undefined;
  } catch {
    return undefined;
  }
}
