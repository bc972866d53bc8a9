// The step timer behind the "capture imported" log line: each step's time, in the order reported,
// a step reported twice in a row counted once, the wait from the job's creation to its claim.
import test from 'tape';
import { setTimeout as sleep } from 'node:timers/promises';
import { StepTimer } from '../../src/ingest/step-timer.ts';

test('StepTimer: steps in order with their times, repeats folded, queued from creation to claim', async (t) => {
  const claimed = Date.now();
  const timer = new StepTimer(new Date(claimed - 1500), claimed);
  timer.step('download');
  await sleep(30);
  timer.step('download');
  timer.step('import');
  await sleep(20);
  timer.step('record');
  const f = timer.fields();
  t.deepEqual(Object.keys(f.steps_ms), ['download', 'import', 'record'], 'each step once, in order');
  t.ok(f.steps_ms.download! >= 25, `download holds its own time and its repeat (${f.steps_ms.download} ms)`);
  t.ok(f.steps_ms.import! >= 15, `import ${f.steps_ms.import} ms`);
  t.equal(f.queued_ms, 1500, 'queued: creation to claim');
  t.ok(f.run_ms >= 45, `run: claim to now (${f.run_ms} ms)`);
});
