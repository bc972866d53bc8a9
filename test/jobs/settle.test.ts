// Recording a job's outcome while the database is away (src/jobs/settle.ts recordWhenBack): tried
// again while the failure is the database being unavailable, at once rejected for anything else,
// given up when the runner stops. No database needed: the write is a function that fails as told.
import test from 'tape';
import { recordWhenBack } from '../../src/jobs/settle.ts';
import { databaseBusy, databaseUnavailable } from '../../src/db/faults.ts';

test('an outcome write that fails with the database unavailable is tried again until it goes through', async (t) => {
  let calls = 0;
  const waits: unknown[] = [];
  const out = await recordWhenBack(
    async () => {
      calls++;
      if (calls === 1) throw databaseUnavailable();
      if (calls === 2) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      if (calls === 3) throw databaseBusy();
      return 'done';
    },
    new AbortController().signal,
    (err) => waits.push(err),
  );
  t.equal(out, 'done', 'recorded in the end');
  t.equal(calls, 4, 'after three failures: unavailable, refused, lock timeout');
  t.equal(waits.length, 1, 'onWait told once (one log line), not per try');
});

test('any other error rejects at once; an aborted signal gives up', async (t) => {
  let calls = 0;
  const other = await recordWhenBack(async () => {
    calls++;
    throw new Error('a bug');
  }, new AbortController().signal).catch((err: Error) => err.message);
  t.deepEqual([other, calls], ['a bug', 1], 'a bug: rejected after one try');
  const stop = new AbortController();
  let tries = 0;
  const gaveUp = recordWhenBack(async () => {
    tries++;
    if (tries === 2) stop.abort();
    throw databaseUnavailable();
  }, stop.signal).catch((err: Error) => err.message);
  t.match(await gaveUp, /database server is unavailable/, 'the runner stopping: rejected with the last error');
  t.equal(tries, 2, 'no try after the abort');
});
