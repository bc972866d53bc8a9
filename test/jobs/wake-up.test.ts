// test: alone (a notified job starts within a bound)
// Wake-up across processes: on PostgreSQL an enqueue notifies in its transaction and every runner
// listens, so a job enqueued by another process starts at once, not at the next poll. The runner
// here polls every 10 minutes: only the notification can start the job within the bound.
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { getJob } from '../../src/jobs/read.ts';
import { enqueue } from '../../src/jobs/enqueue.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { JOBS_CHANNEL } from '../../src/jobs/wake-up.ts';
import { databaseUrlFor, postgresOnly, testDb } from '../helpers/dialect.ts';
import { enqueueFromChild, tempDataDir, waitFor } from '../helpers/jobs.ts';

const NO_POLLING_MS = 600_000;
/** Generous: a notification arrives in milliseconds; the poll would take ten minutes (a minute still tells them apart on a busy machine). */
const BOUND_MS = 60_000;

test('a runner that (nearly) never polls starts a job enqueued by another process', async (t) => {
  if (postgresOnly(t, 'NOTIFY/LISTEN; SQLite runners poll')) return;
  const dataDir = tempDataDir();
  const db = await openDatabase(dataDir, testDb(dataDir));
  const started = new Set<number>();
  const runner = new JobRunner(db, { pollMs: NO_POLLING_MS });
  runner.handle('work', async (job) => void started.add(job.id));
  try {
    await runner.start();
    for (let round = 0; round < 3; round++) {
      const { ids } = await enqueueFromChild(dataDir, 'work', 1);
      await waitFor(() => started.has(ids[0]!), BOUND_MS, `job ${ids[0]} from another process to start`);
      t.pass(`round ${round + 1}: the job from another process started without a poll`);
    }
    // A listener of its own on the jobs channel hears every notification, in commit order.
    const heard: string[] = [];
    const listener = new pg.Client({ connectionString: databaseUrlFor(dataDir) });
    await listener.connect();
    listener.on('notification', (n) => heard.push(n.payload ?? ''));
    await listener.query(`LISTEN ${JOBS_CHANNEL}`);
    try {
      let rolledBackId: number | null = null;
      const undo = new Error('undo');
      const outcome = await db.sequelize.transaction(async (transaction) => {
        const job = await enqueue('rolled-back-kind', {}, { transaction });
        rolledBackId = job.id;
        throw undo;
      }).then(() => 'committed', (err: unknown) => err);
      t.equal(outcome, undo, 'the transaction rolled back (the enqueue inside it ran)');
      t.equal(typeof rolledBackId, 'number', 'the enqueue returned a job id');
      t.equal(await getJob(db, rolledBackId!), null, 'a rolled-back enqueue leaves no job');
      // A committed enqueue after it: once its notification arrives, any the rollback sent would have too.
      await db.sequelize.transaction((transaction) => enqueue('marker-kind', {}, { transaction }));
      await waitFor(() => heard.includes('marker-kind'), BOUND_MS, 'the committed enqueue\'s notification');
      t.deepEqual(heard.filter((k) => k !== 'work'), ['marker-kind'], 'the rolled-back enqueue\'s notification was dropped with it');
    } finally {
      await listener.end();
    }
  } finally {
    await runner.stop();
    await db.close();
  }
});

test('the LISTEN connection killed by the server: the runner reconnects and hears the next enqueue', async (t) => {
  if (postgresOnly(t, 'NOTIFY/LISTEN; SQLite runners poll')) return;
  const dataDir = tempDataDir();
  const db = await openDatabase(dataDir, testDb(dataDir));
  const started = new Set<number>();
  const warnings: string[] = [];
  const runner = new JobRunner(db, { pollMs: NO_POLLING_MS, logger: { info() {}, warn: (m) => warnings.push(m), error() {} } });
  runner.handle('work', async (job) => void started.add(job.id));
  const url = databaseUrlFor(dataDir);
  const sql = (q: string) => execFileSync('psql', ['-qAtX', url, '-c', q], { encoding: 'utf8' }).trim();
  const listeners = () => Number(sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'rigd listen' AND datname = current_database()"));
  try {
    await runner.start();
    t.equal(listeners(), 1, 'one LISTEN connection');
    t.equal(sql("SELECT count(*) FROM pg_terminate_backend((SELECT pid FROM pg_stat_activity WHERE application_name = 'rigd listen' AND datname = current_database()))"), '1', 'the server ended it');
    await waitFor(() => warnings.some((w) => w.startsWith('listening for jobs')), BOUND_MS, 'the runner to notice');
    await waitFor(() => listeners() === 1, BOUND_MS, 'the runner to listen again');
    const { ids } = await enqueueFromChild(dataDir, 'work', 1);
    await waitFor(() => started.has(ids[0]!), BOUND_MS, `job ${ids[0]} to start after the reconnection`);
    t.pass('a job from another process started after the reconnection, without a poll');
  } finally {
    await runner.stop();
    await db.close();
  }
  t.equal(listeners(), 0, 'stopping the runner closed its LISTEN connection');
});
