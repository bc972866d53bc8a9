import type { Command } from 'commander';
import type { Config } from '../config/schema.ts';
import type { Reader } from '../db/reader.ts';

export interface GlobalOptions {
  config?: string;
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
  if (cached) return Object.freeze(cached);
  const { loadConfig } = await import('../config/load.ts');
  const { config } = loadConfig(request);
  rememberConfig(request, config);
  return config;
}

/** Opens the app for the length of one command and always closes it. */
export async function withApp<T>(cmd: Command, fn: (app: import('../services/app.ts').App) => Promise<T>): Promise<T> {
  const { openApp } = await import('../services/app.ts');
  const app = await openApp(await configFor(cmd), { metrics: false });
  try {
    return await fn(app);
  } finally {
    await app.close();
  }
}

/**
 * Runs read-only queries for one command. When the database exists and is current, they go
 * through a direct SQLite connection without loading Sequelize (start-up time of listing
 * commands); otherwise the app is opened, which creates and migrates the database first.
 */
export async function withReader<T>(cmd: Command, fn: (reader: Reader, config: Readonly<Config>) => Promise<T>): Promise<T> {
  const config = await configFor(cmd);
  const { openLiteReader } = await import('../db/reader.ts');
  const lite = await openLiteReader(config.data_dir);
  if (!lite) return withApp(cmd, (app) => fn(app.db.reader, config));
  try {
    return await fn(lite, config);
  } finally {
    await lite.close();
  }
}

/** Writes a JSON document (and nothing else) to stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
