// A throwaway PostgreSQL cluster for the capture import benches (`--engine postgres`): initdb into a
// temp directory (as the postgres user when run as root), started on 127.0.0.1 on a free port with
// the server's default durability (fsync and synchronous_commit on, as an appliance runs it), one
// empty database. stop() stops it and removes the directory.
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../test/helpers/free-port.ts';

export interface Cluster {
  url: string;
  version: string;
  /** The postmaster's pid (its server processes are its children). */
  pid(): number;
  stop(): void;
}

function binDir(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).filter((v) => existsSync(path.join(base, v, 'bin', 'initdb'))) : [];
  if (versions.length === 0) return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  return path.join(base, versions.sort((a, b) => Number(b) - Number(a))[0]!, 'bin');
}


export async function startCluster(): Promise<Cluster> {
  const bin = binDir();
  const asRoot = process.getuid?.() === 0;
  const pgRun = (cmd: string, args: string[]): string => {
    const [c, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path.join(bin, cmd), ...args]] : [path.join(bin, cmd), args];
    const r = spawnSync(c, argv as string[], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${(r.stderr || r.stdout || '').trim()}`);
    return r.stdout;
  };
  const dir = mkdtempSync(path.join(tmpdir(), 'rigd-bench-pg-'));
  if (asRoot) {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }));
    chownSync(dir, id('-u'), id('-g'));
  }
  const data = path.join(dir, 'data');
  let started = false;
  const stop = () => {
    if (started) pgRun('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
    started = false;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    pgRun('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
    const port = await freePort();
    const settings = ['listen_addresses=127.0.0.1', `port=${port}`, `unix_socket_directories=${dir}`];
    pgRun('pg_ctl', ['-D', data, '-l', path.join(dir, 'server.log'), '-w', '-o', settings.map((s) => `-c ${s}`).join(' '), 'start']);
    started = true;
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
    await client.connect();
    await client.query('CREATE DATABASE rigd_bench');
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
    await client.end();
    const pid = () => Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return { url: `postgres://postgres@127.0.0.1:${port}/rigd_bench`, version: rows[0]!.server_version, pid, stop };
  } catch (err) {
    stop();
    throw err;
  }
}
