import { CommanderError } from 'commander';
import { CannotStart, ConfigError, DomainError, EnvFileError } from '../errors.ts';
import { passwordOf, redactText } from '../db/database-url.ts';
import { notOwnerHint } from './not-owner.ts';
import { terminalLines } from './terminal-text.ts';

/** Exit codes of every command. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** A user-fixable problem found by a command itself (bad flag combination, no TTY...). */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Secrets of the loaded config (and the environment's database URL password), masked in any failure line. */
const secrets = new Set<string>();

/**
 * Remembers secrets that no failure line may show, whatever their source (config file, env file,
 * environment): the database URL's password, storage keys, tokens. Called once the config loads.
 */
export function maskInFailures(...values: (string | undefined)[]): void {
  for (const v of values) if (v && v.length >= 4) secrets.add(v);
}

function firstLine(text: string): string {
  return text.split('\n')[0];
}

/**
 * SQLite errors about the file rather than the SQL (no permission, read-only, not a database, disk
 * full, locked too long), wherever a command meets them: the operator can fix these, so one line.
 */
function sqliteFileError(err: unknown): string | null {
  const inner = (err as { original?: unknown; parent?: unknown } | null)?.original ?? (err as { parent?: unknown } | null)?.parent ?? err;
  const code = (inner as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^SQLITE_(CANTOPEN|NOTADB|READONLY|PERM|AUTH|IOERR|CORRUPT|FULL|BUSY|LOCKED)$/.test(code)) return null;
  return firstLine(String((inner as Error).message ?? code));
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
  if (err instanceof EnvFileError) {
    // Not the config's content: the file the service reads is out of this user's reach (sudo).
    write(`rigd: ${firstLine(err.message)}\n`);
    return EXIT.failure;
  }
  if (err instanceof ConfigError) {
    // The operator fixes the config; restarting unchanged cannot help (systemd: RestartPreventExitStatus=2).
    write(`rigd: ${firstLine(err.message)}\n`);
    return EXIT.usage;
  }
  // A file rigd may not open or write: most often the wrong user (no sudo); the line says whose data_dir it is.
  const denied = (line: string) => write(`rigd: ${line}${notOwnerHint(line)}\n`);
  if (err instanceof DomainError || err instanceof CannotStart) {
    denied(firstLine(err.message));
    return EXIT.failure;
  }
  const e = err as NodeJS.ErrnoException;
  if (e && typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code)) {
    denied(firstLine(e.message));
    return EXIT.failure;
  }
  const sqlite = sqliteFileError(err);
  if (sqlite) {
    const locked = /SQLITE_(BUSY|LOCKED)/.test(sqlite)
      ? ': another process held its write lock too long (a rigd serve or rigd command stopped mid-write, an open sqlite3 shell): end that, then run this again'
      : '';
    denied(`database: ${sqlite}${locked}`);
    return EXIT.failure;
  }
  // Whatever it is, a database URL's password and the config's secrets in it are masked.
  write(`rigd: unexpected error: ${redactText(e?.stack ?? String(err), passwordOf(process.env.RIGD_DATABASE_URL ?? ''), ...secrets)}\n`);
  return EXIT.failure;
}

/** What a closed stdout or stderr (the reader went away: `rigd rigs | head`) does to the command. */
let closedOutput: 'exit' | 'ignore' = 'exit';

/** rigd serve keeps serving when whoever read its output goes away; its logs just go nowhere. */
export function keepRunningWhenOutputCloses(): void {
  closedOutput = 'ignore';
}

/**
 * The one place that handles a closed output (EPIPE) for every command: a command whose reader
 * went away has nobody left to tell anything, so it ends quietly (exit 0) once the data_dir's files
 * are handed over, never with a stack trace. Call once, before the command runs.
 */
export function onClosedOutput(beforeExit: () => Promise<void>): void {
  let ending = false;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
      if (closedOutput === 'ignore' || ending) return;
      ending = true;
      void beforeExit()
        .catch(() => undefined)
        .finally(() => process.exit(EXIT.ok));
    });
  }
}
