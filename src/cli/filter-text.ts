import { shellWord } from '../services/shell-word.ts';

/**
 * The filters an empty result was asked with, as the operator typed them, for "no uploads match
 * --state reserved": each given option as `--name value`, the value quoted as a shell needs it.
 */
export function filterText(filters: [flag: string, value: string | undefined][]): string {
  return filters
    .filter((f): f is [string, string] => f[1] !== undefined)
    .map(([flag, value]) => `${flag} ${shellWord(value)}`)
    .join(' ');
}

/** "no uploads yet" without filters, "no uploads match --state reserved" with them. */
export function emptyResult(what: string, filters: [flag: string, value: string | undefined][]): string {
  const given = filterText(filters);
  return given ? `no ${what} match ${given}` : `no ${what} yet`;
}
