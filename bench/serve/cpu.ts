// CPU time a process has used (user + system, from /proc/PID/stat), to put a server's CPU per
// request beside its req/s: on a machine shared with other work, req/s follows the machine's load
// and CPU per request much less.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** user + system CPU of pid so far, in ms. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
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
