import type { Command } from 'commander';
import type { Config } from '../config/schema.ts';
import type { Reader } from '../db/reader.ts';
import { passwordOf } from '../db/database-url.ts';
import { ConfigError } from '../errors.ts';
import { maskInFailures } from './fail.ts';
import { jsonText } from './json-text.ts';
import { noteDataDirForFailures } from './not-owner.ts';

export interface GlobalOptions {
  config?: string;
}

/**
 * The data_dirs this command works on, each with its owner from before the command touched it.
 * A command run as root hands what it created there over to that owner when it ends (main.ts).
 */
export const dataDirsInUse = new Map<string, import('../services/data-files.ts').Owner>();

async function noteDataDir(dataDir: string): Promise<void> {
  noteDataDirForFailures(dataDir);
  if (typeof process.getuid !== 'function' || process.getuid() !== 0 || dataDirsInUse.has(dataDir)) return;
  const { dataDirOwner } = await import('../services/data-files.ts');
  dataDirsInUse.set(dataDir, dataDirOwner(dataDir));
}

/** Gives what this (root) command created in its data_dirs to their owners. Never throws. */
export async function handOverDataDirs(): Promise<void> {
  if (dataDirsInUse.size === 0) return;
  const { handOver } = await import('../services/data-files.ts');
  for (const [dir, owner] of dataDirsInUse) {
    try {
      handOver(dir, owner);
    } catch (err) {
      process.stderr.write(`rigd: could not give the files rigd created in ${dir} to uid ${owner.uid}: ${(err as Error).message}\n`);
    }
  }
}

/**
 * The config for a command, honouring the global --config flag. The config loader (and joi) loads
 * only when these inputs were not validated before (src/config/cache.ts).
 */
export async function configFor(cmd: Command, overrides?: Record<string, unknown>): Promise<Readonly<Config>> {
  const opts = cmd.optsWithGlobals<GlobalOptions>();
  const request = { file: opts.config, overrides };
  const { cachedConfig, rememberConfig } = await import('../config/cache.ts');
  const cached = cachedConfig(request);
  if (cached) {
    maskConfigSecrets(cached);
    await warnUnknownEnv(cached);
    await noteDataDir(cached.data_dir);
    return Object.freeze(cached);
  }
  const { loadConfig } = await import('../config/load.ts');
  const { config } = loadConfig(request);
  rememberConfig(request, config);
  maskConfigSecrets(config);
  await warnUnknownEnv(config);
  await noteDataDir(config.data_dir);
  return config;
}

let envWarned = false;

/** One line on stderr for each RIGD_* variable rigd does not know (a misspelled one is ignored otherwise). */
async function warnUnknownEnv(config: Readonly<Config>): Promise<void> {
  if (envWarned) return;
  envWarned = true;
  const [{ withEnvFile }, { unknownEnvVars, unknownEnvText }] = await Promise.all([import('../config/env-file.ts'), import('../config/env-names.ts')]);
  for (const u of unknownEnvVars(withEnvFile(process.env), config)) process.stderr.write(`rigd: warning: ${unknownEnvText(u)}\n`);
}

/** No failure line of this command shows the config's secrets, wherever they were set. */
function maskConfigSecrets(config: Readonly<Config>): void {
  maskInFailures(passwordOf(config.database.url), config.storage.minio.secret_key, config.ingest.webhook_token, config.server.cookie_secret, passwordOf(config.notify.email.smtp_url), ...config.notify.webhooks.map((h) => h.secret));
}

/**
 * The config for a command that only reads. Its SQLite database lives in data_dir: a data_dir that
 * does not exist is a wrong path (a mistyped RIGD_DATA_DIR or data_dir), not an empty install, so it
 * is refused and nothing is created there. (An existing, empty data_dir is a fresh install: the
 * database is created and migrated as for any command.)
 */
export async function readOnlyConfigFor(cmd: Command): Promise<Readonly<Config>> {
  const config = await configFor(cmd);
  const [{ databaseSite }, { dataDirMissing }] = await Promise.all([import('../db/site.ts'), import('../config/data-dir.ts')]);
  if (databaseSite(config.data_dir, config.database.url).kind === 'file') {
    const missing = dataDirMissing(config.data_dir);
    if (missing) throw new ConfigError(missing);
  }
  return config;
}

/**
 * Opens the app for the length of one command and always closes it; `readOnly`: the command only
 * reads (readOnlyConfigFor).
 */
export async function withApp<T>(cmd: Command, fn: (app: import('../services/app.ts').App) => Promise<T>, opts: { readOnly?: boolean } = {}): Promise<T> {
  const { openApp } = await import('../services/app.ts');
  const app = await openApp(await (opts.readOnly ? readOnlyConfigFor(cmd) : configFor(cmd)), { metrics: false });
  try {
    return await fn(app);
  } finally {
    await app.close();
  }
}

/** What `rigd ingest` works with: the database and the capture service, nothing else of the app. */
export interface CaptureTools {
  db: import('../db/index.ts').Database;
  captures: import('../services/captures/service.ts').CaptureService;
  /** The config's data_dir (where the SQLite database is). */
  dataDir: string;
}

/**
 * Opens only the database (created and migrated like openApp does), the storage driver and the
 * capture service for one command, and always closes them: none of the app's other services (and
 * their modules: notifications, alerts, the ingest worker and its stores) is loaded (start-up time
 * of `rigd ingest --wait`).
 */
export async function withCaptures<T>(cmd: Command, fn: (tools: CaptureTools) => Promise<T>): Promise<T> {
  const config = await configFor(cmd);
  const [{ openDatabase }, { createStorage }, { CaptureService }, { quietLogger }] = await Promise.all([
    import('../db/index.ts'),
    import('../storage/index.ts'),
    import('../services/captures/service.ts'),
    import('../log/quiet.ts'),
  ]);
  const db = await openDatabase(config.data_dir, { url: config.database.url, postgres: config.database });
  try {
    const captures = new CaptureService(db, createStorage(config), config, quietLogger);
    return await fn({ db, captures, dataDir: config.data_dir });
  } finally {
    await db.close();
  }
}

/**
 * Runs read-only queries for one command. When the database exists and is current, they go
 * through a direct SQLite connection without loading Sequelize (start-up time of listing
 * commands); otherwise the app is opened, which creates and migrates the database first.
 */
export async function withReader<T>(cmd: Command, fn: (reader: Reader, config: Readonly<Config>) => Promise<T>): Promise<T> {
  const config = await readOnlyConfigFor(cmd);
  const { openLiteReader } = await import('../db/reader.ts');
  const lite = await openLiteReader(config.data_dir, config.database.url);
  if (!lite) return withApp(cmd, (app) => fn(app.db.reader, config), { readOnly: true });
  try {
    return await fn(lite, config);
  } finally {
    await lite.close();
  }
}

/** Writes a JSON document (and nothing else) to stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${jsonText(value, 2)}\n`);
}
