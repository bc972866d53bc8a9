/**
 * The CLI's memory of the last validated config, so that commands run again with the same inputs
 * skip loading joi (about 40 ms of a listing command's 140 ms on a gateway CPU). A hit is exactly the
 * config validation would give. (Under systemd, rigd serve has no writable home and validates.)
 *
 * The key covers every input of loadConfig: the config file's path and bytes, every RIGD_* variable
 * (those of the environment file included), the flags, the working directory (relative data_dir),
 * and the bytes of the modules that validate (a new rigd never trusts an old entry). A config that
 * fails validation is never stored, so a bad config fails every time (data_dir's checks on the file
 * system ran when the entry was stored; a data_dir broken since then fails when the database opens).
 *
 * The entry keeps no secret (config/secrets.ts names them): each secret's value is left out and
 * only where it stands in the inputs is kept (which RIGD_* variable or the config file, and the
 * place in it); a hit reads it back from those same inputs, unchanged since the key matched. A
 * secret found in no input as it is (a YAML escape, a flag) means no entry: such a config is
 * validated every time. Entries of older versions (config-*.json, which held secrets) are deleted.
 * Entries are written 0600 in a 0700 directory under the user's cache directory ($XDG_CACHE_HOME or
 * ~/.cache); any problem reading or writing one just means validating again.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from './schema.ts';
import { withEnvFile } from './env-file.ts';
import { findConfigFile } from './locate.ts';
import { readConfigText } from './read-capped.ts';
import { secretsOf } from './secrets.ts';

export interface CacheRequest {
  /** --config FILE */
  file?: string;
  overrides?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  /** Where entries live. @default $XDG_CACHE_HOME/rigd or ~/.cache/rigd */
  dir?: string;
}

/** Where a secret stands in the inputs: a RIGD_* variable ('env:NAME') or the config file ('file'), and the place in it. */
interface Place {
  key: string;
  from: string;
  start: number;
  end: number;
}

interface Entry {
  key: string;
  /** The validated config, every secret of it ''. */
  config: Config;
  secrets: Place[];
}

/** Entries of earlier versions (and their unfinished writes): they held the secrets themselves. */
const OLD_ENTRY = /^config-[0-9a-f]{32}\.json(\.[0-9a-f]+\.tmp)?$/;

/** The modules that decide what validation gives, next to this one, in the same form (.ts under tsx, .js when built). */
const VALIDATION_MODULES = ['schema', 'alerts', 'captures', 'notify', 'rules', 'describe', 'data-dir', 'env-file', 'env-names', 'nearest', 'load'];

function schemaBytes(): Buffer {
  const here = fileURLToPath(import.meta.url);
  try {
    return Buffer.concat(VALIDATION_MODULES.map((name) => readFileSync(path.join(path.dirname(here), `${name}${path.extname(here)}`))));
  } catch {
    return Buffer.from(String(Math.random()));
  }
}

function cacheDir(req: CacheRequest, env: NodeJS.ProcessEnv): string {
  if (req.dir) return req.dir;
  const base = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'rigd');
}

function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

interface Located {
  file: string;
  key: string;
  /** The inputs a secret may be read back from, by Place.from. */
  sources: Map<string, string>;
}

/** The entry's file, the key its inputs must match and those inputs; null when the config file cannot be read. */
function locate(req: CacheRequest): Located | null {
  let env: NodeJS.ProcessEnv;
  try {
    env = withEnvFile(req.env ?? process.env); // the env file's RIGD_* variables are inputs too
  } catch {
    return null; // loadConfig reports it
  }
  const configFile = findConfigFile(req.file, env);
  let text = '';
  if (configFile) {
    try {
      text = readConfigText(configFile);
    } catch {
      return null; // loadConfig reports it (unreadable, or over the size cap)
    }
  }
  const vars = Object.keys(env)
    .filter((k) => k.startsWith('RIGD_'))
    .sort()
    .map((k) => [k, env[k]] as const);
  const cwd = process.cwd();
  const key = sha256(JSON.stringify({ schema: sha256(schemaBytes()), configFile, text, vars, overrides: req.overrides ?? null, cwd }));
  const sources = new Map<string, string>(vars.flatMap(([k, v]) => (v === undefined ? [] : [[`env:${k}`, v] as const])));
  sources.set('file', text);
  return { file: path.join(cacheDir(req, env), `entry-${sha256(`${cwd}\0${configFile ?? ''}`).slice(0, 32)}.json`), key, sources };
}

function setAt(target: Record<string, unknown>, keyPath: readonly string[], value: string): void {
  let node = target;
  for (const k of keyPath.slice(0, -1)) node = node[k] as Record<string, unknown>;
  node[keyPath[keyPath.length - 1]!] = value;
}

/** The first input holding value as it is, and where; null when none does. */
function placeOf(sources: Map<string, string>, value: string): Omit<Place, 'key'> | null {
  for (const [from, text] of sources) {
    const start = text.indexOf(value);
    if (start >= 0) return { from, start, end: start + value.length };
  }
  return null;
}

/** The validated config these inputs gave last time (its secrets read back from the inputs), or null. */
export function cachedConfig(req: CacheRequest): Readonly<Config> | null {
  const where = locate(req);
  if (!where) return null;
  try {
    const entry = JSON.parse(readFileSync(where.file, 'utf8')) as Entry;
    if (entry.key !== where.key || !entry.config || !Array.isArray(entry.secrets)) return null;
    for (const place of entry.secrets) {
      const text = where.sources.get(place.from);
      if (text === undefined) return null;
      setAt(entry.config as unknown as Record<string, unknown>, place.key.split('.'), text.slice(place.start, place.end));
    }
    return entry.config;
  } catch {
    return null;
  }
}

/** The entry for a validated config, or null when one of its secrets cannot be left out of it. */
function entryFor(where: Located, config: Readonly<Config>): string | null {
  const kept = JSON.parse(JSON.stringify(config)) as Record<string, unknown>;
  const secrets: Place[] = [];
  const values = secretsOf(config);
  for (const { keyPath, value } of values) {
    const place = placeOf(where.sources, value);
    if (!place) return null;
    secrets.push({ key: keyPath.join('.'), ...place });
    setAt(kept, keyPath, '');
  }
  const text = JSON.stringify({ key: where.key, config: kept as unknown as Config, secrets } satisfies Entry);
  // A secret that also stands under another key (none does today) keeps the config out too.
  return values.some(({ value }) => text.includes(value) || text.includes(JSON.stringify(value).slice(1, -1))) ? null : text;
}

/** Deletes the entries earlier versions wrote (with the secrets in them) from dir. */
function dropOldEntries(dir: string): void {
  for (const name of readdirSync(dir)) if (OLD_ENTRY.test(name)) unlinkSync(path.join(dir, name));
}

/** Remembers a config that passed validation for these inputs, without its secrets. Never throws. */
export function rememberConfig(req: CacheRequest, config: Readonly<Config>): void {
  const where = locate(req);
  if (!where) return;
  try {
    const dir = path.dirname(where.file);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    dropOldEntries(dir);
    const text = entryFor(where, config);
    if (text === null) {
      unlinkSync(where.file);
      return;
    }
    const tmp = `${where.file}.${randomBytes(6).toString('hex')}.tmp`;
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, where.file);
  } catch {
    // No cache here (read-only home, no home, no entry to delete): the next command validates again.
  }
}
