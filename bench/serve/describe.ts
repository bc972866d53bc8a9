// What every bench prints first: the command it ran, how rigd serve was started (its config: the
// keys set beside the defaults, RIGD_<SECTION>_<KEY>) and the machine's state.
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import type { RigdChild } from './rigd.ts';

export const loads = () => loadavg().map((l) => l.toFixed(2)).join(' ');

/** "command: ...", "rigd: ...", "machine: ..." lines. */
export function describeRun(rigd: RigdChild): string {
  const command = `node ${[...process.execArgv, ...process.argv.slice(1)].map((a) => (a.startsWith('/') ? path.relative(process.cwd(), a) : a)).join(' ')}`;
  return [
    `command: ${command}`,
    `rigd:    ${rigd.command} (pid ${rigd.pid}; every other key at its default)`,
    `machine: ${cpus().length} CPUs (shared with other work), node ${process.version}, load average ${loads()}`,
  ].join('\n') + '\n';
}
