// `rigd serve` (bin/rigd, the built CLI: run `npm run build` first) as a child process of the test:
// started, ready once it prints its "rigd listening on" line, stopped by a signal, and killed with
// the test process should the test end first (a failed assertion, Ctrl-C). serveProcess() is the
// usual form; startServe() takes any command line that ends in `rigd ... serve` (unshare, setpriv).
import { spawn, type ChildProcess } from 'node:child_process';
import { rigCommand, rigdEnv, type RunAs } from './cli.ts';

export { freePort } from './free-port.ts';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface StartedServe {
  child: ChildProcess;
  /** The address of the listening line (0.0.0.0 and [::] read as 127.0.0.1). */
  url: string;
  /** Everything printed so far, stdout and stderr. */
  output(): string;
  /** Resolves when the process has exited. */
  exited: Promise<Exit>;
}

export interface StartOptions {
  /** How long it may take to print its listening line (generous: a busy machine starts node slowly). @default 60000 */
  timeoutMs?: number;
  /** Names the process in errors. @default 'rigd serve' */
  label?: string;
}

/** Children still running when the test process exits are killed with it. */
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** Runs file with argv and waits for the listening line; rejects (the process killed) when it exits or times out first. */
export function startServe(file: string, argv: string[], env: NodeJS.ProcessEnv, opts: StartOptions = {}): Promise<StartedServe> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const label = opts.label ?? 'rigd serve';
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    live.add(child);
    let out = '';
    let ready = false;
    const exited = new Promise<Exit>((res) => child.once('exit', (code, signal) => (live.delete(child), res({ code, signal }))));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${label} did not print its listening line in ${timeoutMs / 1000} s:\n${out}`));
    }, timeoutMs);
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = ready ? null : /rigd listening on (http:\/\/[^\s"]+)/.exec(out);
      if (!m) return;
      ready = true;
      clearTimeout(timer);
      resolve({ child, url: m[1]!.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1'), output: () => out, exited });
    });
    child.stderr!.on('data', (d: Buffer) => (out += d));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`${label} exited (${signal ?? code}) before listening:\n${out}`));
    });
  });
}

export interface ServeProcess extends StartedServe {
  /** Sends a signal (default SIGTERM) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `rigd serve ARGS` (as user when given) with the test environment (rigdEnv) and waits for its listening line. */
export async function serveProcess(env: Record<string, string>, args: string[] = ['--port', '0', '--host', '127.0.0.1'], user?: RunAs): Promise<ServeProcess> {
  const [file, argv] = rigCommand(['serve', ...args], user);
  const started = await startServe(file, argv, rigdEnv(env));
  return {
    ...started,
    stop: async (signal = 'SIGTERM') => {
      started.child.kill(signal);
      return (await started.exited).code;
    },
  };
}
