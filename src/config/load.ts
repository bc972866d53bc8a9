import { readFileSync } from 'node:fs';
import path from 'node:path';
import type Joi from 'joi';
import { createRequire } from 'node:module';
import { ConfigError } from '../errors.ts';
import { withEnvFile } from './env-file.ts';
import { findConfigFile, SYSTEM_CONFIG_FILE } from './locate.ts';
import { configSchema, type Config } from './schema.ts';

export { SYSTEM_CONFIG_FILE };

/** The YAML parser loads only when there is a file to parse (loading config stays synchronous). */
const requireYaml = () => createRequire(import.meta.url)('yaml') as typeof import('yaml');


export { ConfigError };

export interface LoadedConfig {
  config: Readonly<Config>;
  /** The file the config came from, or null for built-in defaults. */
  file: string | null;
}

export interface LoadOptions {
  /** --config FILE */
  file?: string;
  /** Environment to read RIGD_CONFIG and RIGD_<SECTION>_<KEY> from. */
  env?: NodeJS.ProcessEnv;
  /** Last-word values from command-line flags, e.g. { server: { port: 4000 } }. */
  overrides?: Record<string, unknown>;
}


function readFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`config: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let doc: unknown;
  try {
    doc = requireYaml().parse(text);
  } catch (err) {
    const first = String((err as Error).message).split('\n')[0];
    throw new ConfigError(`config: ${file} is not valid YAML: ${first}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ConfigError(`config: ${file} must hold a mapping of sections (server:, vpn:, storage: ...)`);
  }
  return doc as Record<string, unknown>;
}

interface Leaf {
  path: string[];
  isList: boolean;
}

/**
 * Every leaf key of the config as a path, e.g. ['storage', 'minio', 'access_key'], read off the
 * defaults (every key has one). Cheaper at start-up than walking joi's describe() output.
 */
function leavesOf(value: Record<string, unknown>, prefix: string[] = []): Leaf[] {
  return Object.entries(value).flatMap(([k, v]) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? leavesOf(v as Record<string, unknown>, [...prefix, k])
      : [{ path: [...prefix, k], isList: Array.isArray(v) }],
  );
}

let leaves: Leaf[] | null = null;
function allLeaves(): Leaf[] {
  leaves ??= leavesOf(configSchema.validate({}).value as Record<string, unknown>);
  return leaves;
}

/** The environment variable that overrides a key: storage.minio.access_key -> RIGD_STORAGE_MINIO_ACCESS_KEY. */
export function envName(keyPath: string[]): string {
  return `RIGD_${keyPath.join('_').toUpperCase()}`;
}

function setPath(target: Record<string, unknown>, keyPath: string[], value: unknown): void {
  let node = target;
  for (const k of keyPath.slice(0, -1)) {
    const next = node[k];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[k] = {};
    node = node[k] as Record<string, unknown>;
  }
  node[keyPath[keyPath.length - 1]] = value;
}

function mergeDeep(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    const b = out[k];
    if (v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)) {
      out[k] = mergeDeep(b as Record<string, unknown>, v as Record<string, unknown>);
    } else {
      out[k] = v;
    }
  }
  return out;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

function describeError(err: Joi.ValidationError, fromEnv: Map<string, string>, file: string | null): string {
  const detail = err.details[0];
  const key = detail.path.join('.');
  const envVar = fromEnv.get(key);
  const where = envVar ? ` (from ${envVar})` : file ? ` (in ${file})` : '';
  const message =
    detail.type === 'object.unknown' ? `unknown key "${key}"` : detail.message.replace(/^"([^"]+)"/, '"$1"');
  return `config: ${message}${where}`;
}

/**
 * Reads the configuration: file (by lookup order), then RIGD_<SECTION>_<KEY> environment
 * overrides, then command-line overrides; validates it and returns it frozen.
 * Throws ConfigError with one line naming the key and what is expected.
 */
export function loadConfig(opts: LoadOptions = {}): LoadedConfig {
  const env = withEnvFile(opts.env ?? process.env);
  const file = findConfigFile(opts.file, env);
  let raw: Record<string, unknown> = file ? readFile(file) : {};

  const fromEnv = new Map<string, string>();
  const envValues: Record<string, unknown> = {};
  for (const leaf of allLeaves()) {
    const name = envName(leaf.path);
    const value = env[name];
    if (value === undefined) continue;
    fromEnv.set(leaf.path.join('.'), name);
    const parsed = leaf.isList ? value.split(',').map((s) => s.trim()).filter(Boolean) : value;
    setPath(envValues, leaf.path, parsed);
  }
  raw = mergeDeep(raw, envValues);
  if (opts.overrides) raw = mergeDeep(raw, opts.overrides);

  const { value, error } = configSchema.validate(raw, { abortEarly: true, convert: true });
  if (error) throw new ConfigError(describeError(error, fromEnv, file));
  const config = value as Config;
  config.data_dir = path.resolve(config.data_dir);
  return { config: deepFreeze(config), file };
}
