import { isIPv4, isIPv6 } from 'node:net';
import { InvalidInput } from '../../errors.ts';

/** A rig report after validation: what PUT /api/v1/rigs/:id stores. */
export interface RigReportInput {
  /** The rig identifier, lower-cased. */
  rigId: string;
  serial: string;
  /** null when the rig sent no local_ip. */
  lanIp: string | null;
  version: string;
  branch: string;
  /** null when the rig has no fix (empty or "nan"). */
  latitude: number | null;
  longitude: number | null;
}

/** Longest serial, version and branch accepted (characters). */
export const MAX_TEXT = 128;

/** RFC 1123 label: letters, digits and inner hyphens, 1-63. It becomes <id>.<rig_domain> on the rigs page. */
const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;
/** Control, format, unassigned, private-use and surrogate code points (terminal escapes among them). */
const NOT_PRINTABLE = /\p{C}/u;

export function parseRigId(raw: string): string {
  if (!DNS_LABEL.test(raw)) {
    throw new InvalidInput('rig id must be a DNS label: 1-63 letters, digits or hyphens, not starting or ending with a hyphen', [{ field: 'id', message: 'not a DNS label' }]);
  }
  return raw.toLowerCase();
}

function bad(field: string, message: string): InvalidInput {
  return new InvalidInput(`${field} ${message}`, [{ field, message }]);
}

/** One scalar form or JSON value as text; undefined when absent. Repeated form keys are refused. */
function scalar(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (Array.isArray(value)) throw bad(field, 'must be given once');
  throw bad(field, 'must be a string');
}

function text(body: Record<string, unknown>, field: string, required: boolean): string {
  const value = (scalar(body, field) ?? '').trim();
  if (required && value === '') throw bad(field, 'is required');
  if (value.length > MAX_TEXT) throw bad(field, `must be at most ${MAX_TEXT} characters`);
  if (NOT_PRINTABLE.test(value)) throw bad(field, 'must be printable text (no control characters)');
  return value;
}

/** A decimal in [-limit, limit]; empty, absent or "nan" (any case) mean no fix. */
function coordinate(body: Record<string, unknown>, field: string, limit: number): number | null {
  const value = (scalar(body, field) ?? '').trim();
  if (value === '' || value.toLowerCase() === 'nan') return null;
  const n = DECIMAL.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(n) || n < -limit || n > limit) throw bad(field, `must be a decimal number between -${limit} and ${limit}, empty or nan`);
  return n;
}

function ipAddress(body: Record<string, unknown>, field: string): string | null {
  const value = (scalar(body, field) ?? '').trim();
  if (value === '') return null;
  // No IPv6 zone ("fe80::1%eth0"): the address becomes a link on the rigs page.
  if (!isIPv4(value) && !(isIPv6(value) && !value.includes('%'))) throw bad(field, 'must be an IP address');
  return value.toLowerCase();
}

/**
 * Validates a report (form or JSON body) for rig `rawId`. Throws InvalidInput with one line
 * naming the first thing wrong. Unknown fields are ignored.
 */
export function parseRigReport(rawId: string, payload: unknown): RigReportInput {
  const rigId = parseRigId(rawId);
  if (payload !== null && payload !== undefined && (typeof payload !== 'object' || Array.isArray(payload))) {
    throw new InvalidInput('the body must be a form or a JSON object');
  }
  const body = (payload ?? {}) as Record<string, unknown>;
  return {
    rigId,
    serial: text(body, 'rig_serial', true),
    latitude: coordinate(body, 'gpsd_latitude', 90),
    longitude: coordinate(body, 'gpsd_longitude', 180),
    lanIp: ipAddress(body, 'local_ip'),
    version: text(body, 'software_version', false),
    branch: text(body, 'git_branch', false),
  };
}
