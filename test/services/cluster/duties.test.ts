// Cluster duties (upload expiry, retention) run on one node at a time: the holder of a session
// advisory lock on PostgreSQL; on SQLite they just run.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import test from 'tape';
import { openDatabase } from '../../../src/db/index.ts';
import { silentLogger } from '../../../src/log.ts';
import { ClusterDuties } from '../../../src/services/cluster/duties.ts';
import { databaseUrlFor, onPostgres, postgresOnly, withDb } from '../../helpers/dialect.ts';
import { REPO, waitFor } from '../../helpers/jobs.ts';
import { tmpDir } from '../../helpers/tmp.ts';

const recorder = () => {
  const events: string[] = [];
  return { events, task: { start: () => void events.push('start'), stop: () => void events.push('stop') } };
};

test('one node: the duties run, and stop with it', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  const { events, task } = recorder();
  const duties = new ClusterDuties(db, [task], 100, silentLogger);
  try {
    await duties.start();
    t.ok(duties.holding, `this node holds the duties (${onPostgres ? 'the advisory lock was free' : 'SQLite: always'})`);
    t.deepEqual(events, ['start'], 'the task was started once');
    await duties.stop();
    t.deepEqual(events, ['start', 'stop'], 'and stopped with the node');
    t.notOk(duties.holding);
  } finally {
    await duties.stop();
    await db.close();
  }
});

test('two holders in one process on PostgreSQL: the second waits until the first stops', async (t) => {
  if (postgresOnly(t, 'the advisory lock; SQLite has one node')) return;
  const db = await openDatabase(...withDb(tmpDir()));
  const a = recorder();
  const b = recorder();
  const first = new ClusterDuties(db, [a.task], 100, silentLogger);
  const second = new ClusterDuties(db, [b.task], 100, silentLogger);
  try {
    await first.start();
    await second.start();
    t.deepEqual([first.holding, second.holding], [true, false], 'only the first holds the duties');
    await first.stop();
    await waitFor(() => second.holding, 60_000, 'the second to take the duties');
    t.deepEqual([a.events, b.events], [['start', 'stop'], ['start']], 'the duties moved: stopped on the first, started on the second');
  } finally {
    await first.stop();
    await second.stop();
    await db.close();
  }
});

interface Holder {
  child: ChildProcess;
  lines: string[];
  exited: Promise<NodeJS.Signals | number | null>;
}

function spawnHolder(dataDir: string): Holder {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO, 'test', 'helpers', 'duty-holder.ts'), dataDir], {
    cwd: REPO,
    env: process.env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => lines.push(line));
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
  return { child, lines, exited };
}

test('two holders in two processes: only one runs the duties; kill -9 it and the other takes over', async (t) => {
  if (postgresOnly(t, 'the advisory lock; SQLite has one node')) return;
  const dataDir = tmpDir();
  databaseUrlFor(dataDir); // created here, before two children would race to create it
  const a = spawnHolder(dataDir);
  const b = spawnHolder(dataDir);
  try {
    await waitFor(() => a.lines.includes('ready') && b.lines.includes('ready'), 60_000, 'both holders to start');
    const started = [a, b].filter((h) => h.lines.includes('duty started'));
    t.equal(started.length, 1, 'exactly one of the two runs the duties');
    const [holder, other] = started[0] === a ? [a, b] : [b, a];
    // Both keep trying every 100 ms; the database says who holds the lock.
    const lockHolders = await db(dataDir, "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())");
    t.equal(lockHolders, 1, 'one advisory lock granted');
    t.notOk(other.lines.includes('duty started'), 'the other has not started them');

    holder.child.kill('SIGKILL');
    t.equal(await holder.exited, 'SIGKILL', 'the holder was killed');
    await waitFor(() => other.lines.includes('duty started'), 60_000, 'the other holder to take the duties');
    t.pass('the other process took the duties over after the holder died');
    t.notOk(holder.lines.includes('duty stopped'), 'the killed holder never stopped its duties itself: the server freed its lock');
  } finally {
    for (const h of [a, b]) if (h.child.exitCode === null && h.child.signalCode === null) h.child.kill('SIGTERM');
    await Promise.all([a.exited, b.exited]);
  }
});

async function db(dataDir: string, sql: string): Promise<number> {
  const conn = await openDatabase(...withDb(dataDir));
  try {
    const [row] = await conn.sequelize.query<{ n: number }>(sql, { type: 'SELECT' as never });
    return Number(row!.n);
  } finally {
    await conn.close();
  }
}

test('a holder frozen (SIGSTOP) gives the duties up: the other takes them, and the holder, resumed, stops its own', async (t) => {
  if (postgresOnly(t, 'the advisory lock; SQLite has one node'))
    return;
  const dataDir = tmpDir();
  databaseUrlFor(dataDir);
  const a = spawnHolder(dataDir);
  const b = spawnHolder(dataDir);
  try {
    await waitFor(() => a.lines.includes('ready') && b.lines.includes('ready'), 60_000, 'both holders to start');
    const [holder, other] = a.lines.includes('duty started') ? [a, b] : [b, a];
    t.ok(holder.lines.includes('duty started'), 'one holder runs the duties');

    // Frozen, not dead: its process, socket and session stay; only it no longer acts.
    holder.child.kill('SIGSTOP');
    await waitFor(() => other.lines.includes('duty started'), 60_000, 'the other holder to take the duties from the frozen one');
    t.pass('the other process took the duties while the holder was frozen');

    holder.child.kill('SIGCONT');
    await waitFor(() => holder.lines.includes('duty stopped'), 60_000, 'the resumed holder to stop its duties');
    t.pass('the resumed holder stopped its duties: it no longer holds the lock');
    const lockHolders = await db(dataDir, "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())");
    t.equal(lockHolders, 1, 'one advisory lock granted');
    t.equal(other.lines.filter((l) => l === 'duty stopped').length, 0, 'the new holder keeps the duties');
  } finally {
    for (const h of [a, b]) {
      if (h.child.exitCode === null && h.child.signalCode === null) {
        h.child.kill('SIGCONT');
        h.child.kill('SIGTERM');
      }
    }
    await Promise.all([a.exited, b.exited]);
  }
});
