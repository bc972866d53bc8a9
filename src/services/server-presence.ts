/**
 * Which `rigd serve` processes run on a data_dir: each writes `<data_dir>/run/serve-<pid>` while it
 * runs and removes it when it stops. A marker whose process is gone (a crash, SIGKILL) is ignored
 * and cleaned up. Lets `rigd restore` refuse to swap the database under a running server.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

function runDir(dataDir: string): string {
  return path.join(dataDir, 'run');
}

function isServe(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: alive but another user's; count it.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('serve');
  } catch {
    return true; // no /proc: trust the live pid
  }
}

/** Marks this process as serving dataDir; returns the function that removes the mark. */
export function markServing(dataDir: string, pid = process.pid): () => void {
  const dir = runDir(dataDir);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `serve-${pid}`);
  writeFileSync(file, `${pid}\n`);
  return () => rmSync(file, { force: true });
}

/** Pids of live `rigd serve` processes on dataDir. */
export function runningServers(dataDir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(runDir(dataDir));
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const name of names) {
    const m = /^serve-(\d+)$/.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    if (isServe(pid)) pids.push(pid);
    else rmSync(path.join(runDir(dataDir), name), { force: true });
  }
  return pids;
}
