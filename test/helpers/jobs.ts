// Helpers for the job queue tests: temp data dirs, polling, a recording handler and child processes.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { tmpDir } from './tmp.ts';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { JobContext } from '../../src/jobs/runner.ts';
import type { JobInfo } from '../../src/jobs/job.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, '..', '..');

/** A fresh data_dir, removed at process exit. */
export function tempDataDir(): string {
  return tmpDir('rigd-queue-');
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * How long a test waits for something that should happen, by default: generous, since a wait costs
 * nothing when things go right and a busy machine (a CI runner, builds next to it) can be slow.
 * A bound the product promises is asserted on its own, never through a wait's deadline.
 */
export const WAIT_MS = 60_000;

/** Polls until fn returns a truthy value; throws after timeoutMs. */
export async function waitFor<T>(fn: () => T | Promise<T>, timeoutMs = WAIT_MS, what = 'condition', everyMs = 20): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Lines "<job id> <pid>" appended to a file in dataDir. */
export function readRecords(dataDir: string, name: 'starts' | 'completions'): { id: number; pid: number }[] {
  const file = path.join(dataDir, `${name}.log`);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [id, pid] = line.split(' ').map(Number);
      return { id, pid };
    });
}

/**
 * A handler that records each start, works for jobMs in small steps (reporting progress, honouring
 * the signal) and then records its completion. It writes nothing else, so running it again after
 * a crash is harmless; the completions file shows how many runs reached the end.
 */
export function recordingHandler(dataDir: string, jobMs: number, onStart?: (job: JobInfo) => void) {
  return async (job: JobInfo, ctx: JobContext): Promise<void> => {
    appendFileSync(path.join(dataDir, 'starts.log'), `${job.id} ${process.pid}\n`);
    onStart?.(job);
    const steps = 10;
    for (let i = 1; i <= steps; i++) {
      await sleep(jobMs / steps, ctx.signal);
      ctx.progress({ step: 'work', bytes: i });
    }
    appendFileSync(path.join(dataDir, 'completions.log'), `${job.id} ${process.pid}\n`);
  };
}

export interface WorkerOptions {
  dataDir: string;
  concurrency?: number;
  jobMs?: number;
  leaseMs?: number;
  pollMs?: number;
  /** Run as node NAME of the registry (registered, heartbeat every 100 ms), as rigd serve does. */
  node?: string;
}

export interface Worker {
  child: ChildProcess;
  /** Resolves with the runner's lease owner once it has started. */
  ready: Promise<string>;
  /** Ids the worker started, in order. */
  started: number[];
  /** The next job the worker started (those already started first); rejects after 10 s. */
  nextStart(): Promise<number>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs test/helpers/jobs-worker.ts (a runner with the recording handler) in a child process. */
export function spawnWorker(opts: WorkerOptions): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(HERE, 'jobs-worker.ts'), JSON.stringify(opts)], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const started: number[] = [];
  let consumed = 0;
  let onReady: (owner: string) => void = () => {};
  let onEarlyExit: (err: Error) => void = () => {};
  const ready = new Promise<string>((resolve, reject) => {
    onReady = resolve;
    onEarlyExit = reject;
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const [word, value] = line.split(' ');
    if (word === 'ready') onReady(value);
    if (word === 'started') {
      started.push(Number(value));
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      onEarlyExit(new Error(`worker exited (${signal ?? code}) before it was ready`));
      resolve({ code, signal });
    }),
  );
  const nextStart = async () => {
    await waitFor(() => started.length > consumed, WAIT_MS, 'a job start in the worker');
    return started[consumed++];
  };
  return { child, ready, started, exited, nextStart };
}

/** Enqueues jobs from another process (as `rigd ingest` would); resolves with their ids and commit time. */
export function enqueueFromChild(dataDir: string, kind: string, count: number): Promise<{ ids: number[]; committedAt: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(HERE, 'jobs-enqueue.ts'), dataDir, kind, String(count)], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`enqueue child exited ${code}`))));
  });
}
