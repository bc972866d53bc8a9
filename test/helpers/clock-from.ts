// A rigd command whose clock starts at a chosen moment: libfaketime (LD_PRELOAD) sets the process's
// clock back by the time the test has run since then. Relative times it prints ("less than a minute
// ago", "20 minutes ago") are then measured from that moment, not from whenever a busy machine got
// round to running the command; only the command's own start-up passes on its clock.
//
//   const seeded = Date.now(); ... reports at seeded - N ...
//   await rigd(['rigs'], { env: { ...env, ...clockFrom(seeded) } });
import { existsSync } from 'node:fs';

export const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

/** Environment for a child started now whose clock reads `ms` (epoch milliseconds) as it starts. */
export function clockFrom(ms: number): Record<string, string> {
  if (!existsSync(LIBFAKETIME)) throw new Error(`libfaketime is not installed (${LIBFAKETIME}): apt-get install faketime`);
  const behind = Math.max(0, Date.now() - ms) / 1000;
  // An offset, not an absolute time: it means the same whatever TZ the command runs with.
  return { LD_PRELOAD: LIBFAKETIME, FAKETIME: `-${behind.toFixed(3)}s`, FAKETIME_DONT_FAKE_MONOTONIC: '1' };
}
