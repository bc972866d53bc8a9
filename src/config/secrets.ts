import type { Config } from './schema.ts';

/** The config keys that hold secrets (the database URLs for their password). */
export const SECRET_KEYS: readonly (readonly string[])[] = [
  ['database', 'url'],
  ['database', 'direct_url'],
  ['storage', 'minio', 'secret_key'],
  ['ingest', 'webhook_token'],
  ['server', 'cookie_secret'],
];

/** The value at keyPath of a config (or a copy of one), undefined when there is none. */
function valueAt(config: Readonly<Config>, keyPath: readonly string[]): unknown {
  let node: unknown = config;
  for (const k of keyPath) node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[k] : undefined;
  return node;
}

/** The secrets a config holds: the non-empty values of SECRET_KEYS, each with its key. */
export function secretsOf(config: Readonly<Config>): { keyPath: readonly string[]; value: string }[] {
  return SECRET_KEYS.flatMap((keyPath) => {
    const value = valueAt(config, keyPath);
    return typeof value === 'string' && value !== '' ? [{ keyPath, value }] : [];
  });
}
