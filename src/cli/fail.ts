import { CommanderError } from 'commander';
import { ConfigError, DomainError } from '../errors.ts';
import { terminalLines } from './terminal-text.ts';

/** Exit codes of every command. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** A user-fixable problem found by a command itself (bad flag combination, no TTY...). */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * Maps anything a command throws to one line on stderr and an exit code. Messages can quote rig
 * keys, file errors and config values: control characters are escaped, line breaks kept.
 */
export function reportFailure(err: unknown, write: (line: string) => void = (l) => process.stderr.write(terminalLines(l))): number {
  if (err instanceof CommanderError) {
    // commander already printed its message.
    return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (err instanceof UsageError) {
    write(`rigd: ${err.message}\n`);
    return EXIT.usage;
  }
  if (err instanceof ConfigError || err instanceof DomainError) {
    write(`rigd: ${err.message}\n`);
    return EXIT.failure;
  }
  const e = err as NodeJS.ErrnoException;
  if (e && typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code)) {
    write(`rigd: ${e.message}\n`);
    return EXIT.failure;
  }
  write(`rigd: unexpected error: ${e?.stack ?? String(err)}\n`);
  return EXIT.failure;
}
