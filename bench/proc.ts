// What benches read of a process they started: its resident memory, from /proc.
import { readFileSync } from 'node:fs';

/** VmRSS of `pid` (default: this process) in kB; 0 once it is gone. */
export function rssKb(pid: number | 'self' = 'self'): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}
