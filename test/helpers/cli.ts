import { spawn } from 'node:child_process';
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
export function rigCommand(args: string[], user?: RunAs): [string, string[]] {
  if (!user) return [process.execPath, nodeArgs(args)];
  return ['setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--init-groups', process.execPath, ...nodeArgs(args)]];
}

/** Runs `bin/rigd ARGS` as a child process to completion (as opts.user when given). */
export function rigd(args: string[], opts: { env: Record<string, string>; input?: string; timeoutMs?: number; user?: RunAs }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const [file, argv] = rigCommand(args, opts.user);
    const child = spawn(file, argv, { env: rigdEnv(opts.env), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** One check of `rigd doctor --json`. */
export interface DoctorCheck {
  check: string;
  status: string;
  message: string;
  fix?: string;
}

/** The line of `rigd doctor`'s text output for `check` ("ok  storage  ..."), or '' when there is none. */
export function doctorLine(out: string, check: string): string {
  return out.split('\n').find((l) => new RegExp(`^(ok|warn|fail)\\s+${check}\\s`).test(l)) ?? '';
}
