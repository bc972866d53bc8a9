// A handler's results and "job done" commit together: the commit callback a handler resolves with
// runs inside the write transaction that checks the lease (owner + attempts) and marks the job done.
// A commit that throws leaves neither (the job is retried); a run that lost its lease records
// nothing. Failures keep a stable error_code: a JobError's code, permanent or retried.
import { QueryTypes } from 'sequelize';
import test from 'tape';
import { openDatabase, type Database } from '../../src/db/index.ts';
import { enqueue } from '../../src/jobs/enqueue.ts';
import { JobError, PermanentJobError } from '../../src/jobs/errors.ts';
import { getJob } from '../../src/jobs/read.ts';
import { JobRunner, type RunOutcome } from '../../src/jobs/runner.ts';
import { sleep, tempDataDir, waitFor } from '../helpers/jobs.ts';
import { onPostgres, withDb } from '../helpers/dialect.ts';

async function withResults(db: Database): Promise<void> {
  await db.writes.run((transaction) => db.sequelize.query(`CREATE TABLE results (seq ${onPostgres ? 'SERIAL' : 'INTEGER'} PRIMARY KEY, job_id INTEGER NOT NULL, note TEXT)`, { transaction }));
}

async function results(db: Database): Promise<{ job_id: number; note: string }[]> {
  return db.sequelize.query('SELECT job_id, note FROM results ORDER BY seq', { type: QueryTypes.SELECT });
}

async function queue(db: Database, kind: string, maxAttempts = 3): Promise<number> {
  return (await db.writes.run((transaction) => enqueue(kind, {}, { transaction, maxAttempts }))).id;
}

const ended = (db: Database, id: number) =>
  waitFor(async () => {
    const job = await getJob(db, id);
    return job && (job.state === 'done' || job.state === 'failed') ? job : null;
  }, 60_000, `job ${id} to end`);

test('the commit runs in the transaction that marks the job done; one that throws leaves neither, and the job is retried', async (t) => {
  const db = await openDatabase(...withDb(tempDataDir()));
  await withResults(db);
  const runner = new JobRunner(db, { pollMs: 50, backoff: { baseMs: 50, jitter: 0 } });
  const seenInside: string[] = [];
  runner.handle('record', async (job) => async (transaction) => {
    // Under the write lock, the job is already marked done in this very transaction.
    const [row] = await db.sequelize.query<{ state: string; lease_owner: string | null }>('SELECT state, lease_owner FROM jobs WHERE id = ?', {
      replacements: [job.id],
      type: QueryTypes.SELECT,
      transaction,
    });
    seenInside.push(`${row!.state}/${row!.lease_owner}`);
    await db.sequelize.query('INSERT INTO results (job_id, note) VALUES (?, ?)', { replacements: [job.id, `attempt ${job.attempts}`], transaction });
    if (job.attempts === 1) throw new JobError('the results table refused the row', 'record_failed');
  });
  try {
    await runner.start();
    const id = await queue(db, 'record');
    const job = await ended(db, id);
    t.deepEqual([job.state, job.attempts], ['done', 2], 'the first commit threw: retried, done on the second attempt');
    t.deepEqual(await results(db), [{ job_id: id, note: 'attempt 2' }], 'only the second attempt\'s results: the first rolled back with its "done"');
    t.deepEqual(seenInside, ['done/null', 'done/null'], 'inside the commit the job already reads done, lease released, in the same transaction');
    t.match(job.lastError ?? '', /results table refused/, 'the failed commit is the last error');
  } finally {
    await runner.stop({ timeoutMs: 1000 });
    await db.close();
  }
});

test('a run that lost its lease records nothing: its commit never runs', async (t) => {
  const db = await openDatabase(...withDb(tempDataDir()));
  await withResults(db);
  const outcomes: RunOutcome[] = [];
  const runner = new JobRunner(db, { pollMs: 50, onOutcome: (_kind, outcome) => outcomes.push(outcome) });
  let started = false;
  let stolen = false;
  let committed = false;
  runner.handle('slow', async (job) => {
    started = true;
    while (!stolen) await sleep(10);
    return async (transaction) => {
      committed = true;
      await db.sequelize.query('INSERT INTO results (job_id, note) VALUES (?, ?)', { replacements: [job.id, 'stale run'], transaction });
    };
  });
  try {
    await runner.start();
    const id = await queue(db, 'slow');
    await waitFor(() => started, 60_000, 'the handler to start');
    // Another runner reclaimed and claimed it meanwhile: new owner, next attempt (the fencing token).
    await db.writes.run((transaction) =>
      db.models.Job.update({ lease_owner: 'other-host/42/beef', attempts: 2, lease_expires_at: new Date(Date.now() + 60_000) }, { where: { id }, transaction }),
    );
    stolen = true;
    await waitFor(() => outcomes.length > 0, 60_000, 'the run to end');
    t.deepEqual(outcomes, ['lost'], 'the run ended lost');
    t.equal(committed, false, 'its commit was not run');
    t.deepEqual(await results(db), [], 'no results recorded');
    const job = await getJob(db, id);
    t.deepEqual([job?.state, job?.leaseOwner, job?.attempts], ['running', 'other-host/42/beef', 2], 'the job is the new owner\'s, untouched');
  } finally {
    await runner.stop({ timeoutMs: 1000 });
    await db.close();
  }
});

test('error codes: a permanent failure keeps its code; a retried one keeps it through "gave up"; other errors have none', async (t) => {
  const db = await openDatabase(...withDb(tempDataDir()));
  const runner = new JobRunner(db, { pollMs: 50, backoff: { baseMs: 50, jitter: 0 } });
  const codes: (string | null)[] = [];
  runner.handle('refused', async () => {
    throw new PermanentJobError('not a SQLite database', 'not_sqlite');
  });
  runner.handle('flaky', async (job) => {
    codes.push(job.errorCode);
    throw new JobError(`storage down (attempt ${job.attempts})`, 'storage_error');
  });
  runner.handle('plain', async () => {
    throw new Error('something else');
  });
  try {
    await runner.start();
    const refused = await ended(db, await queue(db, 'refused'));
    t.deepEqual([refused.state, refused.attempts, refused.errorCode, refused.lastError], ['failed', 1, 'not_sqlite', 'not a SQLite database'], 'permanent: failed at once with its code');
    const flaky = await ended(db, await queue(db, 'flaky', 2));
    t.deepEqual([flaky.state, flaky.attempts, flaky.errorCode], ['failed', 2, 'storage_error'], 'retried, then failed with its code');
    t.equal(flaky.lastError, 'gave up after 2 attempts: storage down (attempt 2)', 'and the last error');
    t.deepEqual(codes, [null, 'storage_error'], 'between attempts the job carried the code of the last failure');
    const plain = await ended(db, await queue(db, 'plain', 1));
    t.deepEqual([plain.state, plain.errorCode], ['failed', null], 'an error without a code: error_code null');
  } finally {
    await runner.stop({ timeoutMs: 1000 });
    await db.close();
  }
});
