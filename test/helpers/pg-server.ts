// A PostgreSQL server of a test's own (initdb into a temp dir, 127.0.0.1, a free port), for faults
// that would hit every other test on the shared one: pg_ctl stop / start / restart, a small
// max_connections, SIGSTOP of a backend. Runs the server binaries as the postgres user when root.
//
//   const pg = await startPgServer({ settings: { max_connections: 20 } });
//   await pg.restart();
//   await pg.close();
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.ts';

export interface PgServer {
  port: number;
  /** postgres://postgres@127.0.0.1:PORT/DB (superuser, trust). */
  url(db?: string): string;
  /** pg_ctl stop -m fast (connections end with 57P01). */
  stop(): void;
  start(): void;
  /** pg_ctl restart -m fast. */
  restart(): void;
  /** Runs one statement as the superuser on database db. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[], db?: string): Promise<T[]>;
  /** The server's log (server.log) as written so far. */
  log(): string;
  /** Stops the server (immediate) and removes its directory. */
  close(): void;
}

export function pgBinDir(): string | null {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const versions = readdirSync(base).filter((v) => existsSync(path.join(base, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(base, versions[0]!, 'bin') : null;
}


const asRoot = process.getuid?.() === 0;

function run(bin: string, args: string[]): string {
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  const r = spawnSync(cmd, argv, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${path.basename(bin)} ${args.join(' ')} failed (${r.status}): ${(r.stderr || r.stdout || '').trim()}`);
  return r.stdout;
}

const servers = new Set<PgServer>();
process.on('exit', () => {
  for (const s of servers) s.close();
});

/** Starts a throwaway server with `settings` (postgresql.conf names) and creates database `rigd`. */
export async function startPgServer(opts: { settings?: Record<string, string | number> } = {}): Promise<PgServer> {
  const bin = pgBinDir();
  if (!bin) throw new Error('no PostgreSQL server binaries (install postgresql or set PG_BIN)');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rigd-pgfault-'));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    chownSync(dir, uid, gid);
  }
  const data = path.join(dir, 'data');
  const port = await freePort('127.0.0.1');
  const settings: Record<string, string | number> = {
    listen_addresses: '127.0.0.1',
    port,
    unix_socket_directories: dir,
    fsync: 'off',
    full_page_writes: 'off',
    max_connections: 100,
    ...opts.settings,
  };
  const o = Object.entries(settings)
    .map(([k, v]) => `-c ${k}=${v}`)
    .join(' ');
  const ctl = (args: string[]) => run(path.join(bin, 'pg_ctl'), ['-D', data, '-l', path.join(dir, 'server.log'), ...args]);
  run(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
  let running = false;
  let closed = false;
  const url = (db = 'rigd') => `postgres://postgres@127.0.0.1:${port}/${db}`;
  const server: PgServer = {
    port,
    url,
    stop() {
      ctl(['-m', 'fast', '-w', 'stop']);
      running = false;
    },
    start() {
      ctl(['-w', '-o', o, 'start']);
      running = true;
    },
    restart() {
      ctl(['-m', 'fast', '-w', '-o', o, 'restart']);
      running = true;
    },
    async query<T>(sql: string, params: unknown[] = [], db = 'rigd') {
      const client = new pg.Client({ connectionString: url(db) });
      client.on('error', () => undefined);
      await client.connect();
      try {
        return (await client.query(sql, params)).rows as T[];
      } finally {
        await client.end().catch(() => undefined);
      }
    },
    log() {
      return existsSync(path.join(dir, 'server.log')) ? readFileSync(path.join(dir, 'server.log'), 'utf8') : '';
    },
    close() {
      if (closed) return;
      closed = true;
      servers.delete(server);
      if (running) {
        try {
          ctl(['-m', 'immediate', '-w', 'stop']);
        } catch {
          // already gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  servers.add(server);
  server.start();
  await server.query('CREATE DATABASE rigd', [], 'postgres');
  return server;
}
