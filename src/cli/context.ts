import type { Command } from 'commander';
import { loadConfig } from '../config/load.ts';
import type { Config } from '../config/schema.ts';

export interface GlobalOptions {
  config?: string;
}

/** Loads the config for a command, honouring the global --config flag. */
export function configFor(cmd: Command, overrides?: Record<string, unknown>): Readonly<Config> {
  const opts = cmd.optsWithGlobals<GlobalOptions>();
  return loadConfig({ file: opts.config, overrides }).config;
}

/** Opens the app for the length of one command and always closes it. */
export async function withApp<T>(cmd: Command, fn: (app: import('../services/app.ts').App) => Promise<T>): Promise<T> {
  const { openApp } = await import('../services/app.ts');
  const app = await openApp(configFor(cmd));
  try {
    return await fn(app);
  } finally {
    await app.close();
  }
}

/** Writes a JSON document (and nothing else) to stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
