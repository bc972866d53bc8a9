// writeWaiter (src/db/write-watch.ts), what `rigd ingest --wait` waits with between its reads: on
// SQLite a commit by another process ends the wait at once; the waits here are ten minutes long, so
// only a commit heard can end them within the bound. With nothing written a wait ends at its time.
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { writeWaiter } from '../../src/db/write-watch.ts';
import { sqliteOnly, withDb } from '../helpers/dialect.ts';
import { enqueueFromChild, tempDataDir } from '../helpers/jobs.ts';

const LONG_MS = 600_000;
/** Generous (a loaded machine is slow): the commit is heard in milliseconds; the wait is ten minutes. */
const BOUND_MS = 60_000;

/** 'woken' when `p` settles first, else 'bound'. */
async function within(p: Promise<void>, ms: number): Promise<'woken' | 'bound'> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<'bound'>((resolve) => (timer = setTimeout(() => resolve('bound'), ms)));
  try {
    return await Promise.race([p.then(() => 'woken' as const), bound]);
  } finally {
    clearTimeout(timer);
  }
}

test('a wait ends at its time when nothing is written', async (t) => {
  const dataDir = tempDataDir();
  const db = await openDatabase(...withDb(dataDir));
  const writes = writeWaiter(db, dataDir);
  try {
    await writes.next(0); // the migrations' own writes, when heard
    t.equal(await within(writes.next(20), BOUND_MS), 'woken', 'a 20 ms wait with no write ended by its timer');
  } finally {
    writes.stop();
    await db.close();
  }
});

test('SQLite: a commit by another process ends a wait at once', async (t) => {
  if (sqliteOnly(t, 'PostgreSQL has no WAL file to watch: the wait is the poll')) return;
  const dataDir = tempDataDir();
  const db = await openDatabase(...withDb(dataDir));
  const writes = writeWaiter(db, dataDir);
  try {
    await writes.next(0);
    for (let round = 1; round <= 3; round++) {
      const waiting = writes.next(LONG_MS);
      await enqueueFromChild(dataDir, 'waiter-test', 1);
      t.equal(await within(waiting, BOUND_MS), 'woken', `round ${round}: the other process's commit ended a ten-minute wait`);
      // A commit made before the wait began ends it too (heard before it, or while it waits).
      await enqueueFromChild(dataDir, 'waiter-test', 1);
      t.equal(await within(writes.next(LONG_MS), BOUND_MS), 'woken', `round ${round}: a commit made before the wait ended it`);
    }
  } finally {
    writes.stop();
    await db.close();
  }
});

test('stop ends a pending wait', async (t) => {
  const dataDir = tempDataDir();
  const db = await openDatabase(...withDb(dataDir));
  const writes = writeWaiter(db, dataDir);
  try {
    await writes.next(0);
    const waiting = writes.next(LONG_MS);
    writes.stop();
    t.equal(await within(waiting, BOUND_MS), 'woken', 'the wait ended with the stop');
  } finally {
    await db.close();
  }
});
