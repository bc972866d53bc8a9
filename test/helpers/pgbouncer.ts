// Debian's pgbouncer in front of a test's PostgreSQL server, in transaction mode (what most hosted
// PostgreSQL puts in front): a free port on 127.0.0.1, trust auth, one database `rigd`. Runs as the
// postgres user when root (pgbouncer refuses to run as root).
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.ts';

export interface PgBouncer {
  port: number;
  /** postgres://postgres@127.0.0.1:PORT/rigd, through the pooler. */
  url: string;
  /** pgbouncer's log so far. */
  log(): string;
  close(): Promise<void>;
}

/** The pgbouncer binary, or null when it is not installed. */
export function pgbouncerBinary(): string | null {
  const r = spawnSync('sh', ['-c', 'command -v pgbouncer'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}


function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const sock = net.connect(port, '127.0.0.1');
      sock.once('connect', () => (sock.destroy(), resolve()));
      sock.once('error', () => {
        sock.destroy();
        if (Date.now() > until) reject(new Error(`pgbouncer did not listen on ${port} within ${timeoutMs} ms`));
        else setTimeout(attempt, 100);
      });
    };
    attempt();
  });
}

/** Starts pgbouncer (pool_mode transaction) in front of the server on 127.0.0.1:serverPort, database rigd. */
export async function startPgBouncer(serverPort: number, opts: { poolSize?: number } = {}): Promise<PgBouncer> {
  const bin = pgbouncerBinary();
  if (!bin) throw new Error('pgbouncer is not installed (Debian: apt-get install pgbouncer)');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rigd-pgbouncer-'));
  const port = await freePort('127.0.0.1');
  const logFile = path.join(dir, 'pgbouncer.log');
  writeFileSync(path.join(dir, 'users.txt'), '"postgres" ""\n');
  writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `rigd = host=127.0.0.1 port=${serverPort} dbname=rigd user=postgres`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${opts.poolSize ?? 8}`,
      'max_client_conn = 500',
      'ignore_startup_parameters = extra_float_digits',
      `logfile = ${logFile}`,
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    chownSync(dir, uid, gid);
    for (const f of ['users.txt', 'pgbouncer.ini']) chownSync(path.join(dir, f), uid, gid);
  }
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, path.join(dir, 'pgbouncer.ini')]] : [bin, [path.join(dir, 'pgbouncer.ini')]];
  const child: ChildProcess = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d));
  child.stderr!.on('data', (d: Buffer) => (out += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = () => child.kill('SIGTERM');
  process.once('exit', kill);
  try {
    await waitForPort(port, 60_000);
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}: ${out}`);
  }
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/rigd`,
    log: () => {
      try {
        return execFileSync('cat', [logFile], { encoding: 'utf8' }) + out;
      } catch {
        return out;
      }
    },
    async close() {
      process.removeListener('exit', kill);
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
