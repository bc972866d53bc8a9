/**
 * Log lines for a person at a terminal (log.format pretty, or auto on a terminal): pino-pretty with
 * one line per log line. A request reads `PUT /api/v1/rigs/rig7 200 3.2 ms 10.144.3.7 [trace-42]`;
 * any other line its message, then its fields as `key=value`.
 */
import { createRequire } from 'node:module';
import type { DestinationStream } from 'pino';

/** Fields every line has, shown by pino-pretty itself (time, level) or as the message. */
const SHOWN = new Set(['time', 'level', 'msg', 'pid', 'hostname']);

function value(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=\\\p{Cc}]+$/u.test(v) ? v : JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return JSON.stringify(v) ?? String(v);
}

/** The text of one pretty line after its time and level. */
export function prettyMessage(log: Record<string, unknown>): string {
  if (log.msg === 'request' && typeof log.method === 'string') {
    const rest = Object.entries(log).filter(([k]) => !SHOWN.has(k) && !['method', 'path', 'status', 'duration_ms', 'client', 'request_id'].includes(k));
    const id = log.request_id === undefined ? '' : ` [${value(log.request_id)}]`;
    const head = `${log.method} ${value(log.path)} ${value(log.status)} ${value(log.duration_ms)} ms ${value(log.client)}${id}`;
    return rest.length ? `${head} ${rest.map(([k, v]) => `${k}=${value(v)}`).join(' ')}` : head;
  }
  const fields = Object.entries(log).filter(([k]) => !SHOWN.has(k));
  const msg = typeof log.msg === 'string' ? value(log.msg).replace(/^"|"$/g, '') : '';
  return [msg, ...fields.map(([k, v]) => `${k}=${value(v)}`)].filter(Boolean).join(' ');
}

/** pino-pretty writing to stdout, one line per log line. */
export function prettyStream(opts: { sync: boolean; colorize: boolean }): DestinationStream & { flushSync?(): void } {
  const pretty = createRequire(import.meta.url)('pino-pretty') as (o: object) => DestinationStream & { flushSync?(): void };
  return pretty({
    destination: 1,
    sync: opts.sync,
    colorize: opts.colorize,
    translateTime: 'SYS:HH:MM:ss.l',
    hideObject: true,
    messageFormat: (log: Record<string, unknown>) => prettyMessage(log),
  });
}
