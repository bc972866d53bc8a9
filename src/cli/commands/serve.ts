import type { Command } from 'commander';
import { createLogger } from '../../log.ts';
import { openApp } from '../../services/app.ts';
import { markServing } from '../../services/server-presence.ts';
import { createServer } from '../../server/server.ts';
import { configFor } from '../context.ts';
import { UsageError } from '../fail.ts';

interface ServeOptions {
  port?: string;
  host?: string;
}

/** How long SIGTERM waits for in-flight requests before closing them. */
const STOP_TIMEOUT_MS = 10_000;

function displayUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
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
  const overrides: Record<string, Record<string, unknown>> = { server: {} };
  if (opts.port !== undefined) {
    if (!/^\d{1,5}$/.test(opts.port) || Number(opts.port) > 65535) throw new UsageError(`--port must be 0-65535, got "${opts.port}"`);
    overrides.server.port = Number(opts.port);
  }
  if (opts.host !== undefined) overrides.server.host = opts.host;
  const config = await configFor(cmd, overrides);
  await refuseRootOnServiceData(config.data_dir);
  const log = createLogger(config.log.level);
  const app = await openApp(config, { log });
  const server = await createServer(app, { log });
  await app.start();
  await server.start();
  // rigd restore refuses while this marker names a live process.
  const unmark = markServing(config.data_dir);
  process.on('exit', unmark);
  const hint = (await app.users.list()).length === 0 ? 'no users yet: add one with  rigd user add NAME --email EMAIL\n' : '';
  process.stdout.write(`rigd listening on ${displayUrl(config.server.host, Number(server.info.port))}\n${hint}`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', { signal });
    try {
      await server.stop({ timeout: STOP_TIMEOUT_MS });
      await app.close();
      process.exit(0);
    } catch (err) {
      log.error('unclean stop', { error: String(err) });
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
