// A throwaway PostgreSQL cluster for a bench: initdb into a temporary directory (as the postgres user
// when run as root: initdb refuses root), started on 127.0.0.1 on a free port with the server's
// default durability (fsync and synchronous_commit on: a COMMIT returns once its WAL is flushed, the
// same promise rigd's "Ok" makes), stopped and removed by stop().
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface PgCluster {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  adminUrl: string;
  version: string;
  /** A new empty database on the cluster, as a URL. */
  createDatabase(name: string): Promise<string>;
  /** The postmaster's pid (its backends are its children). */
  pid(): number;
  stop(): void;
}

function binDir(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).filter((v) => existsSync(path.join(base, v, 'bin', 'initdb'))) : [];
  if (versions.length === 0) throw new Error('no PostgreSQL server binaries: apt-get install postgresql, or set PG_BIN');
  return path.join(base, versions.sort((a, b) => Number(b) - Number(a))[0], 'bin');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export async function startPgCluster(): Promise<PgCluster> {
  const bin = binDir();
  const asRoot = process.getuid?.() === 0;
  const pgRun = (tool: string, args: string[]) => {
    const file = path.join(bin, tool);
    const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
    const r = spawnSync(cmd, argv, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${tool} failed (${r.status}): ${(r.stderr || r.stdout || '').trim()}`);
  };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rigd-bench-pg-'));
  if (asRoot) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })));
  const data = path.join(dir, 'data');
  let started = false;
  const stop = () => {
    if (started) {
      started = false;
      try {
        pgRun('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    pgRun('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale']);
    const port = await freePort();
    const settings = ['listen_addresses=127.0.0.1', `port=${port}`, `unix_socket_directories=${dir}`, 'max_connections=100'];
    pgRun('pg_ctl', ['-D', data, '-l', path.join(dir, 'server.log'), '-w', '-o', settings.map((s) => `-c ${s}`).join(' '), 'start']);
    started = true;
    const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const { default: pg } = await import('pg');
    const admin = async <T>(fn: (c: InstanceType<typeof pg.Client>) => Promise<T>) => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        return await fn(c);
      } finally {
        await c.end();
      }
    };
    const version = await admin(async (c) => (await c.query('SHOW server_version')).rows[0].server_version as string);
    return {
      adminUrl,
      version,
      async createDatabase(name) {
        await admin((c) => c.query(`CREATE DATABASE "${name}"`));
        return `postgres://postgres@127.0.0.1:${port}/${name}`;
      },
      pid: () => Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]),
      stop,
    };
  } catch (err) {
    stop();
    throw err;
  }
}
