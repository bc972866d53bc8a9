import { CannotStart } from '../../../errors.ts';
import { redactText, redactUrl } from '../../database-url.ts';
import { faultCode, sqlState } from '../../faults.ts';

/** SQLSTATEs that mean the database cannot be used as configured (not a bug of rigd). */
const OPEN_STATES: Record<string, string> = {
  '28P01': 'password authentication failed',
  '28000': 'the server refused the login',
  '3D000': 'the database does not exist',
  '42501': 'permission denied',
  '57P03': 'the server is starting up or shutting down',
  '53300': 'too many connections',
};

const ERRNO: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ECONNRESET: 'connection reset',
};

/**
 * The error to report when the PostgreSQL database url names cannot be opened: CannotStart with one
 * line naming the server (password masked), or null when err is something else. Nothing in the line
 * carries the password, whatever the driver put in its message.
 */
export function postgresOpenError(url: string, err: unknown): CannotStart | null {
  const target = redactUrl(url);
  const state = sqlState(err);
  const code = faultCode(err);
  let reason: string | undefined;
  if (state && (OPEN_STATES[state] || state.startsWith('08') || state.startsWith('28'))) reason = `${OPEN_STATES[state] ?? 'connection failed'} (${state})`;
  else if (code && ERRNO[code]) reason = `${ERRNO[code]} (${code})`;
  else if (/Sequelize(Connection|Host|AccessDenied|Database)/.test(String((err as Error)?.name))) reason = firstLine(err);
  if (!reason) return null;
  const password = passwordText(url);
  return new CannotStart(`cannot open the database ${target}: ${redactText(reason, ...password)}`, state ?? code);
}

function firstLine(err: unknown): string {
  const e = (err as { original?: Error }).original ?? (err as Error);
  return String(e?.message ?? err).split('\n')[0] ?? 'connection failed';
}

function passwordText(url: string): string[] {
  try {
    const p = new URL(url).password;
    return p ? [p, decodeURIComponent(p)] : [];
  } catch {
    return [];
  }
}
