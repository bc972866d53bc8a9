import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** rigd's version (package.json's, read once). */
export function rigdVersion(): string {
  cached ??= (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  return cached;
}
