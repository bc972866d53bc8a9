/**
 * A test-only stop point: with RIGD_TEST_STOP_AT=<name> in its environment, the process stops
 * itself (SIGSTOP) when it reaches the point of that name, after one line on stderr, so that a test
 * can kill it exactly there (kill -9 between two steps that commit apart). Without the variable
 * (production) every point is a no-op. Read here: src/config is the one place that reads process.env.
 */
const stopAt = process.env.RIGD_TEST_STOP_AT ?? '';

/** The points a test may name. */
export type StopPoint = 'upload-handover';

export function testStopPoint(name: StopPoint): void {
  if (stopAt !== name) return;
  process.stderr.write(`rigd: stopped at ${name} (RIGD_TEST_STOP_AT)\n`);
  process.kill(process.pid, 'SIGSTOP');
}
