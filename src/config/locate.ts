import { existsSync } from 'node:fs';

export const SYSTEM_CONFIG_FILE = '/etc/rigd/config.yaml';

/** The config file by the documented lookup order: --config, $RIGD_CONFIG, /etc/rigd/config.yaml, none. */
export function findConfigFile(flag: string | undefined, env: NodeJS.ProcessEnv): string | null {
  if (flag) return flag;
  if (env.RIGD_CONFIG) return env.RIGD_CONFIG;
  if (existsSync(SYSTEM_CONFIG_FILE)) return SYSTEM_CONFIG_FILE;
  return null;
}
