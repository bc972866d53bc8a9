// Catching a capture import under way without timing: a `rigd serve` started with
// STOP_CAPTURE_CHILD_AT_FIRST_ROWS in its environment forks a capture child that stops itself
// (SIGSTOP) right after handing rigd its first rows (capture-child-stop.cjs), so the import holds
// uncommitted rows and cannot finish until the test kills it.
//
//   const rigd = await serveProcess({ ...env, ...STOP_CAPTURE_CHILD_AT_FIRST_ROWS });
//   ... wait for the job's progress to show rows ...
//   const pid = await waitFor(() => stoppedCaptureChild(rigd.child.pid!));
//   await rigd.stop('SIGKILL'); await killAndWait(pid);
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from './jobs.ts';

const PRELOAD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'capture-child-stop.cjs');

/** Environment for `rigd serve` (serveProcess): its capture child stops at its first rows. */
export const STOP_CAPTURE_CHILD_AT_FIRST_ROWS: Record<string, string> = { NODE_OPTIONS: `--require ${PRELOAD}` };

/**
 * Runs fn with capture children forked from this process stopping themselves (SIGSTOP) right after
 * announcing `step`: a test acts on the child there (stops or kills it) without racing it.
 */
export async function withChildStoppedAtStep<T>(step: string, fn: () => Promise<T>): Promise<T> {
  const saved = { options: process.env.NODE_OPTIONS, step: process.env.RIGD_TEST_CHILD_STOP_AT_STEP };
  process.env.NODE_OPTIONS = `${saved.options ?? ''} --require ${PRELOAD}`.trim();
  process.env.RIGD_TEST_CHILD_STOP_AT_STEP = step;
  try {
    return await fn();
  } finally {
    if (saved.options === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = saved.options;
    if (saved.step === undefined) delete process.env.RIGD_TEST_CHILD_STOP_AT_STEP;
    else process.env.RIGD_TEST_CHILD_STOP_AT_STEP = saved.step;
  }
}

/** State letter and parent of a process (/proc/PID/stat), or null when it is gone. */
function procStat(pid: number): { state: string; ppid: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses; the last ')' ends it.
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: state!, ppid: Number(ppid) };
  } catch {
    return null;
  }
}

/** The capture child of process `parent` once it is stopped (state T), else null. */
export function stoppedCaptureChild(parent: number): number | null {
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const stat = procStat(pid);
    if (stat?.ppid !== parent || stat.state !== 'T') continue;
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (cmdline.split('\0').some((arg) => /capture-child\.[jt]s$/.test(arg))) return pid;
  }
  return null;
}

/** SIGKILL to `pid` (stopped or not); resolves once it has died (gone, or a zombie holding nothing). */
export async function killAndWait(pid: number): Promise<void> {
  process.kill(pid, 'SIGKILL');
  await waitFor(() => {
    const stat = procStat(pid);
    return stat === null || stat.state === 'Z';
  }, 30_000, `process ${pid} to die`);
}
