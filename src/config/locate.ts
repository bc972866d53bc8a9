import { existsSync } from 'node:fs';
import { ConfigError } from '../errors.ts';

export const SYSTEM_CONFIG_FILE = '/etc/rigd/config.yaml';

/** The config file by the documented lookup order: --config, $RIGD_CONFIG, /etc/rigd/config.yaml, none. */
export function findConfigFile(flag: string | undefined, env: NodeJS.ProcessEnv): string | null {
  // `--config "$CFG"` with CFG unset: refused rather than silently running on another config.
  if (flag !== undefined && flag.trim() === '') {
    throw new ConfigError('config: --config is empty: name a config file, or leave --config out to use $RIGD_CONFIG or /etc/rigd/config.yaml');
  }
  if (flag) return flag;
  if (env.RIGD_CONFIG) return env.RIGD_CONFIG;
  if (existsSync(SYSTEM_CONFIG_FILE)) return SYSTEM_CONFIG_FILE;
  return null;
}
