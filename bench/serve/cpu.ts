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

/**
 * CPU used so far by pid and every process below it (PostgreSQL: the postmaster and its backends),
 * in ms: each live process's own time, and the time of the children that have ended (cutime, cstime).
 */
export function treeCpuMs(pid: number): number {
  const stats = new Map<number, { ppid: number; own: number; dead: number }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      stats.set(Number(name), { ppid: Number(f[1]), own: (Number(f[11]) + Number(f[12])) * TICK_MS, dead: (Number(f[13]) + Number(f[14])) * TICK_MS });
    } catch {
      // The process ended meanwhile.
    }
  }
  const inTree = (p: number): boolean => {
    for (let q = p, hops = 0; q > 1 && hops < 64; q = stats.get(q)?.ppid ?? 0, hops++) if (q === pid) return true;
    return false;
  };
  let ms = 0;
  for (const [p, s] of stats) if (inTree(p)) ms += s.own + s.dead;
  return ms;
}

/** Busy CPU of the whole machine so far, in ms summed over its CPUs (/proc/stat: all but idle and iowait). */
export function machineBusyMs(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number) as number[];
  return (user! + nice! + system! + irq! + softirq! + steal!) * TICK_MS;
}
