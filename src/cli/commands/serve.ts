import type { Command } from 'commander';
import { createLogger } from '../../log.ts';
import { chooseLogFormat, LOG_FORMATS, type LogFormatSetting } from '../../log/format.ts';
import { announceReady } from '../../log/ready.ts';
import { runtimeFields } from '../../log/runtime.ts';
import { openApp, type App } from '../../services/app.ts';
import { markServing } from '../../services/server-presence.ts';
import { hostPort, listen } from '../../server/listen.ts';
import { createServer } from '../../server/server.ts';
import { configFor } from '../context.ts';
import { keepRunningWhenOutputCloses, UsageError } from '../fail.ts';

interface ServeOptions {
  port?: string;
  host?: string;
  logFormat?: string;
}

/** How long SIGTERM waits for in-flight requests before closing them. */
const STOP_TIMEOUT_MS = 10_000;
/** How long a start-up that failed waits for what it opened to close before giving up on it. */
const FAILED_START_CLOSE_MS = 5_000;

function displayUrl(host: string, port: number): string {
  return `http://${hostPort(host, port)}`;
}

/** Closes the app, but never waits longer than ms (the caller exits next either way). */
async function closeWithin(app: App, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  await Promise.race([app.close().catch(() => undefined), late]);
  clearTimeout(timer);
}

/**
 * rigd serve as root on a data_dir that belongs to the service user would keep creating root-owned
 * files (database -wal/-shm, objects) the service cannot write after the next restart: refuse, naming
 * the user to run it as.
 */
async function refuseRootOnServiceData(dataDir: string): Promise<void> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return;
  const { dataDirOwner, userName } = await import('../../services/data-files.ts');
  const owner = dataDirOwner(dataDir);
  if (owner.uid === 0) return;
  const user = userName(owner.uid);
  throw new UsageError(`${dataDir} belongs to ${user}: run rigd serve as that user (systemctl start rigd, or runuser -u ${user} -- rigd serve), not as root`);
}

export async function serve(opts: ServeOptions, cmd: Command): Promise<void> {
  // Whoever reads its output may go away (`rigd serve | head -1`, a journal restarting): serving goes on.
  keepRunningWhenOutputCloses();
  const overrides: Record<string, Record<string, unknown>> = { server: {} };
  if (opts.port !== undefined) {
    if (!/^\d{1,5}$/.test(opts.port) || Number(opts.port) > 65535) throw new UsageError(`--port must be 0-65535, got "${opts.port}"`);
    overrides.server.port = Number(opts.port);
  }
  if (opts.host !== undefined) overrides.server.host = opts.host;
  if (opts.logFormat !== undefined) {
    if (!LOG_FORMATS.includes(opts.logFormat as LogFormatSetting)) throw new UsageError(`--log-format must be one of ${LOG_FORMATS.join(', ')}, got "${opts.logFormat}"`);
    overrides.log = { format: opts.logFormat };
  }
  const config = await configFor(cmd, overrides);
  await refuseRootOnServiceData(config.data_dir);
  // Buffered stdout (flushed on exit): a slow journal or pipe never holds up a rig report.
  const format = chooseLogFormat(config.log.format, process.stdout.isTTY === true);
  const log = createLogger(config.log.level, undefined, {}, { format, async: true });
  process.on('exit', () => log.flush?.());
  // logrotate's postrotate (and a terminal that closes) sends SIGHUP: rigd writes its log to stdout
  // (the journal under systemd), so there is no file to reopen. It says so and keeps serving.
  process.on('SIGHUP', () => {
    log.info('SIGHUP received: logs go to stdout, nothing to reopen; still serving', { signal: 'SIGHUP' });
    log.flush?.();
  });
  // A database that cannot be opened throws CannotStart here, with nothing left open.
  const app = await openApp(config, { log });
  let server: Awaited<ReturnType<typeof createServer>>;
  try {
    server = await createServer(app, { log });
    // Listen before the background work starts: a taken port claims no ingest job.
    await listen(server, config.server.host, config.server.port);
  } catch (err) {
    await closeWithin(app, FAILED_START_CLOSE_MS);
    throw err;
  }
  try {
    // Registers this node (refused when a live node has its instance id), then the background work.
    await app.start({ port: Number(server.info.port) });
  } catch (err) {
    await server.stop({ timeout: 0 }).catch(() => undefined);
    await closeWithin(app, FAILED_START_CLOSE_MS);
    throw err;
  }
  // Handlers before the listening line: whoever reads that line may signal at once, and a signal
  // that arrives before its handler exists kills the process with the default action.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', { signal });
    try {
      await server.stop({ timeout: STOP_TIMEOUT_MS });
      await app.close();
      log.flush?.();
      process.exit(0);
    } catch (err) {
      log.error('unclean stop', { error: String(err) });
      log.flush?.();
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // A clock that was ahead (and stamped reports with its future) and has been set right since.
  const ahead = await app.rigs.retention.aheadOfClock().catch(() => null);
  if (ahead) {
    log.warn('the newest stored report lies ahead of this clock: the clock was ahead when it was stored, or is behind now (check NTP: timedatectl)', {
      newest_report: ahead.newest.toISOString(),
      ahead_s: Math.round(ahead.aheadMs / 1000),
    });
  }
  // rigd restore refuses while this marker names a live process.
  const unmark = markServing(config.data_dir);
  process.on('exit', unmark);
  const noUsers = (await app.users.list()).length === 0;
  log.debug('runtime', { ...runtimeFields() });
  announceReady(log, format, displayUrl(config.server.host, Number(server.info.port)), noUsers);
}
