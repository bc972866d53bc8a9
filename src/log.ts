/**
 * One JSON object per line on stdout, filtered by level. Under systemd (stdout connected to the
 * journal), each line starts with its syslog priority, `<3>` for an error (sd-daemon(3); journald
 * strips it: SyslogLevelPrefix=yes is the default), so `journalctl -u rigd -p err` shows errors only.
 * Anywhere else (a terminal, a pipe, a file) the lines are plain JSON.
 */
import { fstatSync } from 'node:fs';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** The syslog priority of each level: 7 debug, 6 info, 4 warning, 3 err. */
export const PRIORITY: Record<Exclude<LogLevel, 'silent'>, number> = { debug: 7, info: 6, warn: 4, error: 3 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

/**
 * True when file descriptor `fd` is the stream systemd connected to the journal: systemd sets
 * JOURNAL_STREAM to that stream's "device:inode" (systemd.exec(5)); a redirected stdout is not it.
 */
export function isJournalStream(fd: number, env: NodeJS.ProcessEnv = process.env): boolean {
  const m = /^(\d+):(\d+)$/.exec(env.JOURNAL_STREAM ?? '');
  if (!m) return false;
  try {
    const st = fstatSync(fd, { bigint: true });
    return st.dev === BigInt(m[1]) && st.ino === BigInt(m[2]);
  } catch {
    return false;
  }
}

/** Writes to stdout, each line prefixed with its priority when stdout is the journal. */
function stdoutWriter(): (line: string, level: Exclude<LogLevel, 'silent'>) => void {
  const journal = isJournalStream(1);
  return (line, level) => void process.stdout.write(journal ? `<${PRIORITY[level]}>${line}` : line);
}

export function createLogger(
  level: LogLevel,
  write: (line: string, level: Exclude<LogLevel, 'silent'>) => void = stdoutWriter(),
  base: Record<string, unknown> = {},
): Logger {
  const min = RANK[level];
  const emit = (lvl: Exclude<LogLevel, 'silent'>) => (msg: string, fields: Record<string, unknown> = {}) => {
    if (RANK[lvl] < min) return;
    write(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...base, ...fields })}\n`, lvl);
  };
  return {
    debug: emit('debug'),
    info: emit('info'),
    warn: emit('warn'),
    error: emit('error'),
    child: (fields) => createLogger(level, write, { ...base, ...fields }),
  };
}

export const silentLogger: Logger = createLogger('silent', () => undefined);
