// `bin/rigd serve` as operators run it: its own process, the default config (a temporary data_dir,
// on PostgreSQL a database.url), request logging as shipped. Its stdout and stderr go to a file
// (as the journal takes them), never through the bench's own event loop.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const RIGD = path.join(ROOT, 'bin', 'rigd');

export interface RigdChild {
  pid: number;
  port: number;
  /** The command line it was started with (environment keys first). */
  command: string;
  /** Everything it wrote so far. */
  output(): string;
  /** SIGTERM, then its exit code. */
  stop(): Promise<number | null>;
}

export interface RigdOptions {
  dataDir: string;
  /** Empty or absent: SQLite in data_dir. */
  databaseUrl?: string;
  /** Config keys set through the environment (RIGD_SECTION_KEY), beside the default config. */
  env?: Record<string, string>;
  /** Where stdout and stderr go. */
  logFile: string;
  /**
   * node's own flags (e.g. --cpu-prof): rigd then runs as `node FLAGS --max-semi-space-size=32
   * bin/rigd serve`, as the unit's ExecStart does (FLAGS may give another semi-space). Absent:
   * bin/rigd is executed itself.
   */
  nodeFlags?: string[];
  /** The port to listen on (a presigned URL's storage.public_url must name it beforehand). @default 0 */
  port?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startRigd(opts: RigdOptions): Promise<RigdChild> {
  const env: Record<string, string> = {
    RIGD_DATA_DIR: opts.dataDir,
    ...(opts.databaseUrl ? { RIGD_DATABASE_URL: opts.databaseUrl, RIGD_CLUSTER_SINGLE_NODE: 'true' } : {}),
    ...(opts.env ?? {}),
  };
  const args = ['serve', '--port', String(opts.port ?? 0)];
  const semi = opts.nodeFlags?.some((f) => f.startsWith('--max-semi-space-size')) ? [] : ['--max-semi-space-size=32'];
  const [file, argv] = opts.nodeFlags ? [process.execPath, [...opts.nodeFlags, ...semi, RIGD, ...args]] : [RIGD, args];
  const fd = openSync(opts.logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(file, argv, { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let gone = false;
  void exited.then(() => (gone = true));
  const output = () => readFileSync(opts.logFile, 'utf8');
  for (let i = 0; i < 1200; i++) {
    const m = /rigd listening on http:\/\/[^\s"]*:(\d+)/.exec(output());
    if (m) {
      return {
        pid: child.pid!,
        port: Number(m[1]),
        command: [...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...[file, ...argv].map((a) => (a === RIGD ? path.relative(process.cwd(), RIGD) : a))].join(' '),
        output,
        stop: () => {
          if (!gone) child.kill('SIGTERM');
          return exited;
        },
      };
    }
    if (gone) break;
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error(`rigd serve did not start:\n${output()}`);
}

/** `bin/rigd ARGS` on dataDir (a seed before serve starts: migrate, user add), stdin `input`; its stdout. */
export function rigdCli(dataDir: string, args: string[], input = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(RIGD, args, { env: { PATH: process.env.PATH, HOME: process.env.HOME, RIGD_DATA_DIR: dataDir }, maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`rigd ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
    child.stdin?.end(input);
  });
}
