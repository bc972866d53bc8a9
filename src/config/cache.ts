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
 * The entry holds secrets: it is written 0600 in a 0700 directory under the user's
 * cache directory ($XDG_CACHE_HOME or ~/.cache), and any problem reading or writing it just means
 * validating again.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from './schema.ts';
import { withEnvFile } from './env-file.ts';
import { findConfigFile } from './locate.ts';
import { readConfigText } from './read-capped.ts';

export interface CacheRequest {
  /** --config FILE */
  file?: string;
  overrides?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  /** Where entries live. @default $XDG_CACHE_HOME/rigd or ~/.cache/rigd */
  dir?: string;
}

interface Entry {
  key: string;
  config: Config;
}

/** The modules that decide what validation gives, next to this one, in the same form (.ts under tsx, .js when built). */
const VALIDATION_MODULES = ['schema', 'notify', 'rules', 'describe', 'data-dir', 'env-file', 'load'];

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

/** The entry's file and the key its inputs must match; null when the config file cannot be read. */
function locate(req: CacheRequest): { file: string; key: string } | null {
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
    .map((k) => [k, env[k]]);
  const cwd = process.cwd();
  const key = sha256(JSON.stringify({ schema: sha256(schemaBytes()), configFile, text, vars, overrides: req.overrides ?? null, cwd }));
  return { file: path.join(cacheDir(req, env), `config-${sha256(`${cwd}\0${configFile ?? ''}`).slice(0, 32)}.json`), key };
}

/** The validated config these inputs gave last time, or null. */
export function cachedConfig(req: CacheRequest): Readonly<Config> | null {
  const where = locate(req);
  if (!where) return null;
  try {
    const entry = JSON.parse(readFileSync(where.file, 'utf8')) as Entry;
    return entry.key === where.key && entry.config ? entry.config : null;
  } catch {
    return null;
  }
}

/** Remembers a config that passed validation for these inputs. Never throws. */
export function rememberConfig(req: CacheRequest, config: Readonly<Config>): void {
  const where = locate(req);
  if (!where) return;
  try {
    mkdirSync(path.dirname(where.file), { recursive: true, mode: 0o700 });
    const tmp = `${where.file}.${randomBytes(6).toString('hex')}.tmp`;
    writeFileSync(tmp, JSON.stringify({ key: where.key, config } satisfies Entry), { mode: 0o600 });
    renameSync(tmp, where.file);
  } catch {
    // No cache here (read-only home, no home): the next command validates again.
  }
}
