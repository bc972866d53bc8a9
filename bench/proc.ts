// What benches read of a process they started, from /proc: its resident memory, its CPU.
import { readdirSync, readFileSync } from 'node:fs';

/** VmRSS of `pid` (default: this process) in kB; 0 once it is gone. */
export function rssKb(pid: number | 'self' = 'self'): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** CPU (user + system, ms) of `pid` itself and of its children it has waited for; zeros once it is gone. */
export function cpuParts(pid: number | 'self'): { self: number; reaped: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): utime, stime, cutime, cstime are 14 to 17.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
    return { self: (f[11]! + f[12]!) * TICK_MS, reaped: (f[13]! + f[14]!) * TICK_MS };
  } catch {
    return { self: 0, reaped: 0 };
  }
}

/** CPU (ms) of `pid`, its reaped children and every live descendant. */
export function treeCpuMs(pid: number): number {
  const { self, reaped } = cpuParts(pid);
  let children: number[] = [];
  try {
    children = readdirSync(`/proc/${pid}/task`).flatMap((task) => readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
  } catch {
    children = [];
  }
  return self + reaped + children.reduce((n, c) => n + treeCpuMs(c), 0);
}
