import type { Logger } from '../log.ts';

/**
 * A logger that writes nothing and loads nothing (no pino): for a CLI command whose services log
 * only what rigd serve would (`rigd ingest` queueing a capture). log.ts's silentLogger is pino's.
 */
export const quietLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => quietLogger,
};
