#!/usr/bin/env node
// `npm run test:pg [-- files...]`: the test suite on a throwaway PostgreSQL cluster. initdb into a
// temporary directory (as the postgres user when run as root), start it on 127.0.0.1 on a free port
// with durability off (fsync, synchronous_commit, full_page_writes: a test cluster has nothing to
// keep), create the template database each test file's databases are copied from, run test/run.mjs
// with RIGD_TEST_DATABASE_URL set (it runs several files at once: RIGD_TEST_JOBS), then stop the
// cluster and remove it: also on failure or Ctrl-C.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const TEMPLATE = 'rigd_test_template';

/** The server binaries: PG_BIN, pg_config --bindir, or the newest /usr/lib/postgresql/N/bin. */
function binDir() {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base).filter((v) => existsSync(path.join(base, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
    if (versions.length) return path.join(base, versions[0], 'bin');
  }
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('no PostgreSQL server binaries found: install postgresql (Debian: apt-get install postgresql) or set PG_BIN');
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const asRoot = process.getuid?.() === 0;
/** Runs a server binary, as the postgres user when we are root (initdb refuses root). */
function pgRun(bin, args, opts = {}) {
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  const r = spawnSync(cmd, argv, { encoding: 'utf8', ...opts });
  if (r.status !== 0) throw new Error(`${path.basename(bin)} failed (${r.status}): ${(r.stderr || r.stdout || '').trim()}`);
  return r.stdout;
}

const bin = binDir();
const dir = mkdtempSync(path.join(os.tmpdir(), 'rigd-pg-'));
const data = path.join(dir, 'data');
if (asRoot) {
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
  chownSync(dir, uid, gid);
}
let started = false;
let cleaned = false;
function cleanup() {
  if (cleaned) return;
  cleaned = true;
  if (started) {
    try {
      pgRun(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } catch (err) {
      process.stderr.write(`test-pg: ${err.message}\n`);
    }
  }
  rmSync(dir, { recursive: true, force: true });
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    cleanup();
    process.exit(130);
  });
}
process.on('exit', cleanup);

let code = 1;
try {
  pgRun(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
  const port = await freePort();
  const settings = [
    'listen_addresses=127.0.0.1',
    `port=${port}`,
    `unix_socket_directories=${dir}`,
    'fsync=off',
    'synchronous_commit=off',
    'full_page_writes=off',
    // Room for the pools of the files running at once (RIGD_TEST_JOBS) and their child processes.
    'max_connections=400',
  ];
  pgRun(path.join(bin, 'pg_ctl'), ['-D', data, '-l', path.join(dir, 'server.log'), '-w', '-o', settings.map((s) => `-c ${s}`).join(' '), 'start']);
  started = true;
  const admin = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${TEMPLATE} IS_TEMPLATE true`);
  const { rows } = await client.query('SHOW server_version');
  await client.end();
  process.stdout.write(`# PostgreSQL ${rows[0].server_version} on 127.0.0.1:${port} (${dir})\n`);
  const child = spawn(process.execPath, [path.join(root, 'test', 'run.mjs'), ...process.argv.slice(2)], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, RIGD_TEST_DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/${TEMPLATE}` },
  });
  code = await new Promise((resolve) => child.on('close', (c, signal) => resolve(signal ? 1 : (c ?? 1))));
} catch (err) {
  process.stderr.write(`test-pg: ${err.message}\n`);
} finally {
  cleanup();
}
process.exit(code);
