/**
 * A config validation error as one line naming the key, the value, what is allowed and where the
 * value came from:
 *   config: vpn.cidr: "10.144.0.0/33" is not an IPv4 CIDR (expected ...) (from /etc/rigd/config.yaml)
 * What is allowed is read off the key's own schema (its range, its choices, its default as an
 * example), so a key added to schema.ts is described without anything added here.
 */
import type Joi from 'joi';
import { redactUrl } from '../db/database-url.ts';
import { KeyedProblem, Problem } from './rules.ts';
import { nearest } from './nearest.ts';

/** Values of these keys are never printed. */
const SECRET = /(secret|token|password|access_key)$/;

function shown(key: string, value: unknown): string {
  if (typeof value === 'string' && SECRET.test(key)) return `(hidden, ${value.length} characters)`;
  // A URL may carry a password: shown with it masked.
  if (typeof value === 'string' && (key === 'database.url' || key === 'notify.email.smtp_url' || /^notify\.webhooks\[\d+\]\.url$/.test(key))) value = redactUrl(value);
  // A MinIO endpoint never carries credentials (they are refused), but one written with user:password@ is not printed.
  if (typeof value === 'string' && /^storage\.minio\.(public_)?endpoint$/.test(key)) value = value.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/?#]*@/i, '$1***@');
  const text = value === undefined ? 'nothing' : typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function schemaAt(root: Joi.Schema, keyPath: (string | number)[]): Joi.Description | null {
  const names = keyPath.filter((k): k is string => typeof k === 'string');
  try {
    return (names.length ? root.extract(names) : root).describe();
  } catch {
    return null;
  }
}

type Rule = { name: string; args?: Record<string, unknown> };

function rule(desc: Joi.Description | null, name: string): Record<string, unknown> | undefined {
  const found = (desc?.rules as Rule[] | undefined)?.find((r) => r.name === name);
  return found ? (found.args ?? {}) : undefined;
}

/** "an integer from 0 to 65535", read off the number's rules. */
function numberRange(desc: Joi.Description | null): string {
  const integer = rule(desc, 'integer') !== undefined;
  const min = rule(desc, 'min')?.limit as number | undefined;
  const max = rule(desc, 'max')?.limit as number | undefined;
  const over = rule(desc, 'greater')?.limit as number | undefined;
  const under = rule(desc, 'less')?.limit as number | undefined;
  const what = integer ? 'an integer' : 'a number';
  if (min !== undefined && max !== undefined) return `${what} from ${min} to ${max}`;
  // A bound the value must pass (greater, less), not reach: "a number over 0 and at most 1".
  if (over !== undefined || under !== undefined) {
    const low = over !== undefined ? `over ${over}` : min !== undefined ? `at least ${min}` : undefined;
    const high = under !== undefined ? `under ${under}` : max !== undefined ? `at most ${max}` : undefined;
    return `${what} ${[low, high].filter(Boolean).join(' and ')}`;
  }
  if (min !== undefined) return `${what} of at least ${min}`;
  if (max !== undefined) return `${what} of at most ${max}`;
  return what;
}

/** "(expected like vpn.rigs.internal)" from the key's default, when it has a non-empty one. */
function likeDefault(desc: Joi.Description | null, what: string): string {
  const d = (desc?.flags as { default?: unknown } | undefined)?.default;
  return typeof d === 'string' && d !== '' ? `(expected ${what}, like ${d})` : `(expected ${what})`;
}

function problemOf(detail: Joi.ValidationErrorItem, desc: Joi.Description | null, key: string): string {
  const ctx = detail.context ?? {};
  switch (detail.type) {
    case 'any.custom':
      return ctx.error instanceof Problem ? ctx.error.message : `is refused: ${String((ctx.error as Error)?.message ?? detail.message)}`;
    case 'any.only':
      return `is not allowed (expected one of: ${(ctx.valids as unknown[]).map(String).join(', ')})`;
    case 'number.base':
      return `is not a number (expected ${numberRange(desc)})`;
    case 'number.integer':
      return `is not an integer (expected ${numberRange(desc)})`;
    case 'number.min':
    case 'number.max':
    case 'number.greater':
    case 'number.less':
    case 'number.unsafe':
    case 'number.infinity':
      return `is out of range (expected ${numberRange(desc)})`;
    case 'boolean.base':
      return 'is not true or false (expected true or false)';
    case 'string.base':
      return `is not text ${likeDefault(desc, 'a string')}`;
    case 'string.empty':
      return `is empty ${likeDefault(desc, 'a value')}`;
    case 'string.min':
      return `is too short (expected at least ${String(ctx.limit)} characters${rule(desc, 'min') && SECRET.test(key) ? ', or empty' : ''})`;
    case 'string.max':
      return `is too long (expected at most ${String(ctx.limit)} characters)`;
    case 'string.hostname':
      return `is not a host name or address ${likeDefault(desc, 'letters, digits, hyphens and dots')}`;
    case 'string.pattern.base':
    case 'string.pattern.name':
      return `is not ${ctx.name ? `a valid ${String(ctx.name)}` : 'in the expected form'} ${likeDefault(desc, 'a value of that form')}`;
    case 'string.uri':
    case 'string.uriCustomScheme':
      return 'is not a URL (expected an http(s) URL)';
    case 'array.base':
      return 'is not a list (expected a list, like [a, b], or one value)';
    case 'object.base':
      return `is not a section (expected keys under it: ${Object.keys((desc?.keys as object) ?? {}).join(', ')})`;
    default:
      return detail.message.replace(/^"[^"]*" /, '');
  }
}

/** Where the key's value came from: " (from RIGD_SERVER_PORT)", " (from /etc/rigd/config.yaml)". */
export type SourceOf = (keyPath: string[]) => string;

/** The one line for the first detail of a joi validation error on the whole config. */
export function describeConfigError(err: Joi.ValidationError, root: Joi.Schema, sourceOf: SourceOf): string {
  const detail = err.details[0];
  const names = detail.path.filter((k): k is string => typeof k === 'string');
  const key = String(detail.context?.label ?? detail.path.join('.'));
  const where = sourceOf(names);
  if (detail.type === 'object.unknown') {
    const known = Object.keys((schemaAt(root, detail.path.slice(0, -1))?.keys as object) ?? {});
    const guess = nearest(String(detail.path[detail.path.length - 1]), known);
    const hint = guess ? `: did you mean "${[...detail.path.slice(0, -1), guess].join('.')}"?` : '';
    return `config: unknown key "${key}"${hint} (expected one of: ${known.join(', ')})${where}`;
  }
  const ctxError = detail.context?.error;
  if (ctxError instanceof KeyedProblem) return `config: ${ctxError.key}: ${shown(ctxError.key, ctxError.value)} ${ctxError.message}${sourceOf(ctxError.key.split('.'))}`;
  // A rule over the whole config that names no key: its own words.
  if (detail.path.length === 0) return `config: ${detail.message.replace(/^"value" /, '')}${sourceOf([])}`;
  const desc = schemaAt(root, detail.path);
  return `config: ${key}: ${shown(key, detail.context?.value)} ${problemOf(detail, desc, key)}${where}`;
}

