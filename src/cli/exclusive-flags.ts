import type { Command } from 'commander';
import { UsageError } from './fail.ts';

/**
 * Refuses a command given both of two flags that set one value (--admin and --no-admin) or that
 * contradict each other (--all and --rig): commander alone would keep whichever came last, or both,
 * and say nothing. A flag its parent command also has (`captures --rig`) is parsed by the parent:
 * its event is heard there too.
 */
export function exclusiveFlags(cmd: Command, a: string, b: string): Command {
  const seen = new Set<string>();
  for (let at: Command | null = cmd; at; at = at.parent) {
    at.on(`option:${a}`, () => seen.add(a));
    at.on(`option:${b}`, () => seen.add(b));
  }
  return cmd.hook('preAction', () => {
    if (seen.size === 2) throw new UsageError(`--${a} and --${b} exclude each other: give one`);
  });
}
