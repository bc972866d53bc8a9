import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { databaseUrlFor } from './dialect.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const RIGD = path.join(ROOT, 'bin', 'rigd');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Environment for a child rigd: only what the test gives, plus PATH and HOME. */
export function rigdEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  // RIGD_DATABASE_URL: the test file's own PostgreSQL database when the suite runs on one.
  // (the one of RIGD_DATA_DIR when given, as testConfig's; none when an env file names the data_dir:
  // that file names its database too, see envFileDatabaseLine).
  const url = env.RIGD_DATA_DIR ? databaseUrlFor(env.RIGD_DATA_DIR) : env.RIGD_ENV_FILE ? undefined : process.env.RIGD_DATABASE_URL;
  const database = url ? { RIGD_DATABASE_URL: url } : {};
  const merged: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, RIGD_AUTH_BCRYPT_COST: '4', RIGD_LOG_LEVEL: 'warn', ...database, ...env };
  // With a database.url the embedded store is for one node only: the tests' nodes say so (unless the test does).
  if (merged.RIGD_DATABASE_URL && merged.RIGD_CLUSTER_SINGLE_NODE === undefined) merged.RIGD_CLUSTER_SINGLE_NODE = 'true';
  return merged;
}

/** A user to run the child as (the test runs as root): uid and gid, set with setpriv. */
export interface RunAs {
  uid: number;
  gid: number;
}

/**
 * node's flags for `bin/rigd ARGS`: `serve` with the semi-space flag, as the unit's ExecStart runs
 * it (without it bin/rigd starts the server again as its own child: test/log/runtime.test.ts).
 */
export function nodeArgs(args: string[]): string[] {
  return args.includes('serve') ? ['--max-semi-space-size=32', RIGD, ...args] : [RIGD, ...args];
}

/** The program and arguments that run `bin/rigd ARGS`, as `user` when given. */
function command(args: string[], user?: RunAs): [string, string[]] {
  if (!user) return [process.execPath, nodeArgs(args)];
  return ['setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--init-groups', process.execPath, ...nodeArgs(args)]];
}

/** Runs `bin/rigd ARGS` as a child process to completion (as opts.user when given). */
export function rigd(args: string[], opts: { env: Record<string, string>; input?: string; timeoutMs?: number; user?: RunAs }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const [file, argv] = command(args, opts.user);
    const child = spawn(file, argv, { env: rigdEnv(opts.env), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  /** Everything printed so far. */
  output(): string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `rigd serve` as a child process (as user when given) and waits for its "listening" line. */
export function serveProcess(env: Record<string, string>, args: string[] = ['--port', '0', '--host', '127.0.0.1'], user?: RunAs): Promise<ServeProcess> {
  return new Promise((resolve, reject) => {
    const [file, argv] = command(['serve', ...args], user);
    const child = spawn(file, argv, { env: rigdEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`rigd serve did not start: ${out}`));
    }, 20_000);
    const onData = (d: Buffer) => {
      out += d;
      const m = /rigd listening on (http:\/\/[^\s"]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          child,
          url: m[1].replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1'),
          output: () => out,
          stop: (signal = 'SIGTERM') => {
            child.kill(signal);
            return exited;
          },
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`rigd serve exited with ${code}: ${out}`));
    });
  });
}
