/**
 * Logging through pino: one JSON object per line on stdout, `{"time","level","msg",...fields}`,
 * filtered by level, secrets redacted (src/log/redact.ts). Under systemd (stdout connected to the
 * journal), each line starts with its syslog priority, `<3>` for an error (sd-daemon(3); journald
 * strips it: SyslogLevelPrefix=yes is the default), so `journalctl -u rigd -p err` shows errors only.
 * Anywhere else (a terminal, a pipe, a file) the lines are plain JSON, or pino-pretty's text when
 * the format is pretty (src/log/format.ts).
 *
 * The rest of rigd speaks the small Logger interface below (`log.info(msg, fields)`); the pino
 * instance behind it is what routes reach as `request.logger` (src/server/ext/request-log.ts).
 */
import { fstatSync } from 'node:fs';
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import type { LogFormat } from './log/format.ts';
import { prettyStream } from './log/pretty.ts';
import { maskFields } from './log/redact.ts';
import { currentRequestId } from './log/request-scope.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
type Level = Exclude<LogLevel, 'silent'>;

/** The syslog priority of each level: 7 debug, 6 info, 4 warning, 3 err. */
export const PRIORITY: Record<Level, number> = { debug: 7, info: 6, warn: 4, error: 3 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
  /** The pino logger behind this one (absent on a stand-in). */
  readonly pino?: PinoLogger;
  /** Writes out what is buffered, synchronously (before exit). */
  flush?(): void;
}

/** Receives each finished line (ending in a newline) with its level. */
export type LineWriter = (line: string, level: Level) => void;

export interface LoggerOptions {
  /** json (default) or pretty (pino-pretty, in-process); only for stdout. */
  format?: LogFormat;
  /** Buffer stdout writes (SonicBoom, flushed on exit): a slow reader never blocks a request. */
  async?: boolean;
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

const LABEL: Record<number, Level> = { 20: 'debug', 30: 'info', 40: 'warn', 50: 'error' };

/** A pino destination that hands each line, with its level (pino's metadata), to `write`. */
function lineStream(write: LineWriter): DestinationStream & { lastLevel?: number } {
  const stream = {
    lastLevel: 30,
    [pino.symbols.needsMetadataGsym]: true,
    write(line: string) {
      write(line, LABEL[stream.lastLevel] ?? 'info');
    },
  };
  return stream;
}

interface Sink {
  stream: DestinationStream;
  flush(): void;
}

function stdoutSink(options: LoggerOptions): Sink {
  if (options.format === 'pretty') {
    const stream = prettyStream({ sync: !options.async, colorize: process.stdout.isTTY === true });
    return { stream, flush: () => stream.flushSync?.() };
  }
  const out = pino.destination({ dest: 1, sync: !options.async });
  const flush = () => {
    try {
      out.flushSync();
    } catch {
      // Nothing buffered, or stdout gone: nothing more to do.
    }
  };
  if (!isJournalStream(1)) return { stream: out, flush };
  return { stream: lineStream((line, level) => out.write(`<${PRIORITY[level]}>${line}`)), flush };
}

/**
 * pino writes `{level,time,...bindings,...fields,msg}`; rigd's lines read `{time,level,msg,...}`
 * (what journal readers and the tests match on): the level leaves pino's fixed prefix, the time
 * opens the line, and the level and message lead the fields.
 */
function pinoFor(level: LogLevel, stream: DestinationStream): PinoLogger {
  return pino(
    {
      level,
      base: null,
      timestamp: () => `"time":"${new Date().toISOString()}"`,
      formatters: { level: () => ({}), log: (obj) => maskFields(obj) },
      mixin: (_obj, num) => ({ level: LABEL[num] ?? String(num) }),
      // The level first, then the line's fields; inside a request, its id unless the line has one.
      mixinMergeStrategy: (obj, mixin) => {
        const line = Object.assign(mixin, obj) as Record<string, unknown>;
        if (line.request_id === undefined) {
          const requestId = currentRequestId();
          if (requestId !== undefined) line.request_id = requestId;
        }
        return line;
      },
    },
    stream,
  );
}

/** The Logger interface over a pino logger: the message leads the fields. */
export function fromPino(p: PinoLogger, flush: () => void = () => p.flush()): Logger {
  const emit = (lvl: Level) => (msg: string, fields?: Record<string, unknown>) => {
    if (!p.isLevelEnabled(lvl)) return;
    p[lvl](fields ? { msg, ...fields } : { msg });
  };
  return {
    debug: emit('debug'),
    info: emit('info'),
    warn: emit('warn'),
    error: emit('error'),
    child: (fields) => fromPino(p.child(fields), flush),
    pino: p,
    flush,
  };
}

/**
 * A logger at `level`. Lines go to `write` when given (tests, other sinks), else to stdout: JSON
 * (with journald priorities when stdout is the journal) or pretty text (options.format).
 */
export function createLogger(level: LogLevel, write?: LineWriter, base: Record<string, unknown> = {}, options: LoggerOptions = {}): Logger {
  const sink: Sink = write ? { stream: lineStream(write), flush: () => undefined } : stdoutSink(options);
  const p = pinoFor(level, sink.stream);
  return fromPino(Object.keys(base).length ? p.child(base) : p, sink.flush);
}

export const silentLogger: Logger = createLogger('silent', () => undefined);
