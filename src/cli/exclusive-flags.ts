import type { Command } from 'commander';
import { UsageError } from './fail.ts';

/**
 * Refuses a command given both of two flags that set one value (--admin and --no-admin): commander
 * alone would keep whichever came last and say nothing.
 */
export function exclusiveFlags(cmd: Command, a: string, b: string): Command {
  const seen = new Set<string>();
  cmd.on(`option:${a}`, () => seen.add(a));
  cmd.on(`option:${b}`, () => seen.add(b));
  return cmd.hook('preAction', () => {
    if (seen.size === 2) throw new UsageError(`--${a} and --${b} exclude each other: give one`);
  });
}
