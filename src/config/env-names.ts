/**
 * The RIGD_* environment variables rigd does not know. A misspelled one (RIGD_DATABSE_URL) would
 * otherwise be ignored in silence and rigd run on defaults the operator did not mean: every command
 * names it on stderr with the nearest real name, and `rigd doctor` lists it as a warning.
 * The known names are those of the config's keys (read off a validated config, so that no schema
 * loads for it), the webhook variables, and the variables that are not config keys.
 */
import { nearest } from './nearest.ts';

/** The environment variable that overrides a key: storage.minio.access_key -> RIGD_STORAGE_MINIO_ACCESS_KEY. */
export function envName(keyPath: readonly string[]): string {
  return `RIGD_${keyPath.join('_').toUpperCase()}`;
}

/**
 * RIGD_* variables that are not config keys: the config file and environment file to read
 * (docs/operate.md), the variable bin/rigd sets for the server it starts again as its own child,
 * and the cache directory of `npm run package`.
 */
const NOT_CONFIG = ['RIGD_CONFIG', 'RIGD_ENV_FILE', 'RIGD_RELAUNCHED_BY', 'RIGD_PACKAGE_CACHE'];

/** RIGD_TEST_*: test-only hooks (test-stop.ts, the test runners); RIGD_NOTIFY_WEBHOOKS_<N>_URL / _SECRET (notify.ts). */
const KNOWN_PATTERNS = [/^RIGD_TEST_/, /^RIGD_NOTIFY_WEBHOOKS_\d{1,3}_(URL|SECRET)$/];

function leafNames(value: Record<string, unknown>, prefix: string[] = []): string[] {
  return Object.entries(value).flatMap(([k, v]) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? leafNames(v as Record<string, unknown>, [...prefix, k]) : [envName([...prefix, k])],
  );
}

export interface UnknownEnv {
  name: string;
  /** The known name nearest to it, if one is near enough to be what was meant. */
  nearest?: string;
}

/** The RIGD_* variables of env that rigd does not know, each with the nearest known name, sorted by name. */
export function unknownEnvVars(env: NodeJS.ProcessEnv, config: object): UnknownEnv[] {
  const known = [...leafNames(config as Record<string, unknown>), ...NOT_CONFIG];
  const knownSet = new Set(known);
  return Object.keys(env)
    .filter((name) => name.startsWith('RIGD_') && !knownSet.has(name) && !KNOWN_PATTERNS.some((p) => p.test(name)))
    .sort()
    .map((name) => ({ name, nearest: nearest(name, known) }));
}

/** The line that names one: `RIGD_DATABSE_URL is not a rigd variable and is ignored (did you mean RIGD_DATABASE_URL?)`. */
export function unknownEnvText(u: UnknownEnv): string {
  const hint = u.nearest ? `did you mean ${u.nearest}?` : 'a config key is RIGD_<SECTION>_<KEY>, see docs/configuration.md';
  return `${u.name} is not a rigd variable and is ignored (${hint})`;
}
