import { createRequire } from 'node:module';
import { ConfigError } from '../errors.ts';
import { readConfigText } from './read-capped.ts';
import { dataDirProblem, resolveDataDir } from './data-dir.ts';
import { describeConfigError } from './describe.ts';
import { withEnvFile } from './env-file.ts';
import { envName } from './env-names.ts';
import { webhookEnvOverrides } from './notify.ts';
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
    text = readConfigText(file);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
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

export { envName };

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

/** Whether keyPath holds a value (not a section, not undefined) in a nested record. */
function has(record: Record<string, unknown> | undefined, keyPath: string[]): boolean {
  let node: unknown = record;
  for (const k of keyPath) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return false;
    node = (node as Record<string, unknown>)[k];
  }
  return node !== undefined && (node === null || typeof node !== 'object' || Array.isArray(node));
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
  const hooks = webhookEnvOverrides((raw.notify as Record<string, unknown> | undefined)?.webhooks, env);
  if (hooks) {
    raw = mergeDeep(raw, { notify: { webhooks: hooks.webhooks } });
    for (const [key, name] of hooks.used) fromEnv.set(key, name);
  }
  if (opts.overrides) raw = mergeDeep(raw, opts.overrides);

  // Where each key's value came from, for the error line: flags, then the environment, then the file.
  const sourceOf = (keyPath: string[]): string => {
    for (let n = keyPath.length; n > 0; n--) {
      const at = keyPath.slice(0, n);
      if (opts.overrides && has(opts.overrides, at)) return ' (from the command line)';
      const envVar = fromEnv.get(at.join('.'));
      if (envVar) return ` (from ${envVar})`;
    }
    return file ? ` (from ${file})` : '';
  };

  const { value, error } = configSchema.validate(raw, { abortEarly: true, convert: true });
  if (error) throw new ConfigError(describeConfigError(error, configSchema, sourceOf));
  const config = value as Config;
  // A relative data_dir written in the config file is relative to that file; any other, to the working directory.
  const fromFile = file !== null && has(raw, ['data_dir']) && !fromEnv.has('data_dir') && !has(opts.overrides, ['data_dir']);
  const given = config.data_dir;
  config.data_dir = resolveDataDir(given, fromFile ? file : null);
  const problem = dataDirProblem(config.data_dir);
  if (problem) {
    const resolved = config.data_dir === given ? '' : ` (${config.data_dir})`;
    throw new ConfigError(`config: data_dir: ${JSON.stringify(given)}${resolved} ${problem}${sourceOf(['data_dir'])}`);
  }
  return { config: deepFreeze(config), file };
}
