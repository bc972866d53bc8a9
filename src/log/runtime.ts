/**
 * What `rigd serve` runs with, for its debug line "runtime": V8's young generation (semi-space) as
 * set on node's command line or in NODE_OPTIONS (bin/rigd sets 32 MiB when neither does; null: V8's
 * default), the heap limit V8 computed from it, and libuv's thread pool size (bin/rigd sets 16 unless
 * UV_THREADPOOL_SIZE is given; libuv reads it when the pool starts).
 */
import { getHeapStatistics } from 'node:v8';

const SEMI_SPACE = '--max-semi-space-size';

/** The flag's value in args (`--flag=N` or `--flag N`), the last one given; null when absent. */
function semiSpaceIn(args: readonly string[]): number | null {
  let value: number | null = null;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a.startsWith(`${SEMI_SPACE}=`)) value = Number(a.slice(SEMI_SPACE.length + 1));
    else if (a === SEMI_SPACE && i + 1 < args.length) value = Number(args[++i]);
  }
  return value;
}

export interface RuntimeFields {
  node: string;
  max_semi_space_mb: number | null;
  heap_size_limit_mb: number;
  threadpool_size: number;
}

export function runtimeFields(env: NodeJS.ProcessEnv = process.env, execArgv: readonly string[] = process.execArgv): RuntimeFields {
  // node's own command line wins over NODE_OPTIONS.
  const semi = semiSpaceIn(execArgv) ?? semiSpaceIn((env.NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean));
  const pool = Number(env.UV_THREADPOOL_SIZE);
  return {
    node: process.version,
    max_semi_space_mb: semi,
    heap_size_limit_mb: Math.round(getHeapStatistics().heap_size_limit / 1048576),
    threadpool_size: Number.isInteger(pool) && pool > 0 ? Math.min(pool, 1024) : 4,
  };
}
