// CPU time a process has used (user + system, from /proc/PID/stat), to put a server's CPU per
// request beside its req/s: on a machine shared with other work, req/s follows the machine's load
// and CPU per request much less.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** user + system CPU of pid so far (all its threads), in ms; with tid, of that thread only (the main thread's tid is pid). */
export function cpuMs(pid: number, tid?: number): number {
  const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces), in parentheses: state is field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

/** The pid that serves: the one in data_dir/run/serve-PID (bin/rigd may have started it as its child). */
export function servePid(dataDir: string): number {
  const marker = readdirSync(path.join(dataDir, 'run')).find((n) => n.startsWith('serve-'));
  if (!marker) throw new Error(`no serve marker in ${dataDir}/run`);
  return Number(marker.slice('serve-'.length));
}

/** Resident memory of pid now and at its peak (VmRSS, VmHWM from /proc/PID/status), in MiB. */
export function rssMiB(pid: number): { now: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { now: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) };
}

/** user + system CPU of each thread of pid so far, in ms, by thread id with its name (comm). */
export function threadCpuMs(pid: number): Map<number, { name: string; ms: number }> {
  const out = new Map<number, { name: string; ms: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      out.set(Number(tid), { name, ms: cpuMs(pid, Number(tid)) });
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}
