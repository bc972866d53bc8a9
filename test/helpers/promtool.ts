// promtool (Debian's `prometheus` package, installed by .ci/run): checks expositions and rule files.
import { spawnSync } from 'node:child_process';

export interface PromtoolResult {
  status: number | null;
  /** stdout and stderr together. */
  output: string;
}

/** Runs `promtool ARGS...`, with `input` on stdin when given. */
export function promtool(args: string[], input?: string): PromtoolResult {
  const r = spawnSync('promtool', args, { input, encoding: 'utf8', timeout: 60_000 });
  if (r.error) throw r.error;
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}

/**
 * A sample line without its `instance` label (every series carries the node's instance id):
 * `a{s="x",instance="gw:1"} 1` -> `a{s="x"} 1`, `a{instance="gw:1"} 1` -> `a 1`.
 */
export function withoutInstance(line: string): string {
  return line.replace(/\{instance="(?:[^"\\]|\\.)*"\}/, '').replace(/,instance="(?:[^"\\]|\\.)*"|instance="(?:[^"\\]|\\.)*",/, '');
}

/** One sample line's value: `name{labels} value` (labels exactly as printed, less `instance`), or undefined when absent. */
export function sample(exposition: string, series: string): number | undefined {
  const line = exposition.split('\n').map(withoutInstance).find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
