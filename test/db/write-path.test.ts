import test from 'tape';
import { closeSync, openSync, readdirSync, readlinkSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { QueryTypes } from 'sequelize';
import { DB_FILE } from '../../src/db/file.ts';
import { openDatabase } from '../../src/db/index.ts';
import { rejects } from '../helpers/assert.ts';
import { onPostgres, sqliteOnly, withDb } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

/** Files of dataDir this process holds open (the database, its WAL and shared memory, per connection). */
function openFiles(dataDir: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(`${dataDir}/`);
    } catch {
      return false;
    }
  }).length;
}

/**
 * The WAL header's first salt: SQLite adds one to it each time the WAL starts over (kept in shared
 * memory, so whichever connection restarts it).
 */
function walSalt(dataDir: string): number {
  const fd = openSync(path.join(dataDir, `${DB_FILE}-wal`), 'r');
  try {
    const header = Buffer.alloc(20);
    readSync(fd, header, 0, 20, 0);
    return header.readUInt32BE(16);
  } finally {
    closeSync(fd);
  }
}

test('pragmas reach both the read connection and the transaction connection', async (t) => {
  if (sqliteOnly(t, 'pragmas are per SQLite connection; PostgreSQL has none')) return;
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    const read = async (sql: string) => db.sequelize.query(sql, { plain: true, type: QueryTypes.SELECT });
    t.deepEqual(await read('PRAGMA journal_mode'), { journal_mode: 'wal' });
    t.deepEqual(await read('PRAGMA synchronous'), { synchronous: 1 }, 'NORMAL');
    t.deepEqual(await read('PRAGMA foreign_keys'), { foreign_keys: 1 });
    t.deepEqual(await read('PRAGMA busy_timeout'), { timeout: 10000 });
    const inTx = await db.writes.run(async (tx) => ({
      sync: await db.sequelize.query('PRAGMA synchronous', { plain: true, type: QueryTypes.SELECT, transaction: tx }),
      busy: await db.sequelize.query('PRAGMA busy_timeout', { plain: true, type: QueryTypes.SELECT, transaction: tx }),
      fk: await db.sequelize.query('PRAGMA foreign_keys', { plain: true, type: QueryTypes.SELECT, transaction: tx }),
    }));
    t.deepEqual(inTx, { sync: { synchronous: 1 }, busy: { timeout: 10000 }, fk: { foreign_keys: 1 } }, 'inside a write transaction');
    // A TEMP table lives as long as its connection: the next write transaction runs on the same one.
    await db.writes.run((tx) => db.sequelize.query('CREATE TEMP TABLE kept (n INTEGER)', { transaction: tx }));
    const kept = await db.writes.run((tx) => db.sequelize.query("SELECT count(*) AS n FROM temp.sqlite_master WHERE name = 'kept'", { plain: true, type: QueryTypes.SELECT, transaction: tx }));
    t.deepEqual(kept, { n: 1 }, 'write transactions one after another reuse one open connection (no open, pragmas and schema read per transaction)');
    // Outside the write path, a second transaction waits for the first one's write lock (busy_timeout).
    let inside = 0;
    let most = 0;
    const body = async () => {
      most = Math.max(most, ++inside);
      await new Promise((r) => setTimeout(r, 50));
      inside--;
    };
    await Promise.all([db.sequelize.transaction(body), db.sequelize.transaction(body)]);
    t.equal(most, 1, 'two transactions at once outside the write path: one waits for the other, both commit');
  } finally {
    await db.close();
  }
});

test('the write path serialises writes; a failed transaction rolls back', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    await db.sequelize.query('CREATE TABLE t (n INTEGER NOT NULL UNIQUE)');
    let running = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 50 }, (_, n) =>
        db.writes.run(async (tx) => {
          most = Math.max(most, ++running);
          await db.sequelize.query('INSERT INTO t (n) VALUES (?)', { replacements: [n], transaction: tx });
          running--;
        }),
      ),
    );
    t.equal(most, 1, 'never two write transactions at once');
    await rejects(
      t,
      db.writes.run(async (tx) => {
        await db.sequelize.query('INSERT INTO t (n) VALUES (1000)', { transaction: tx });
        await db.sequelize.query('INSERT INTO t (n) VALUES (1)', { transaction: tx });
      }),
      /UNIQUE|Validation/,
      'a constraint failure rejects',
    );
    const [{ c }] = (await db.sequelize.query('SELECT count(*) AS c FROM t', { type: QueryTypes.SELECT })) as { c: number }[];
    t.equal(c, 50, 'the failed transaction left nothing (1000 rolled back)');
  } finally {
    await db.close();
  }
});

test('group commit: concurrent submits share transactions, resolve after commit, a bad item fails alone', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    await db.sequelize.query('CREATE TABLE r (n INTEGER NOT NULL CHECK (n >= 0))');
    const batchSizes: number[] = [];
    const batcher = db.writes.batcher<number, number>(async (items, tx) => {
      batchSizes.push(items.length);
      for (const n of items) await db.sequelize.query('INSERT INTO r (n) VALUES (?)', { replacements: [n], transaction: tx });
      return items.map((n) => n * 2);
    });
    const results = await Promise.all(Array.from({ length: 200 }, (_, n) => batcher.submit(n)));
    t.deepEqual(results, Array.from({ length: 200 }, (_, n) => n * 2), 'each submit gets its own result');
    t.ok(batchSizes.length < 200 && batchSizes.length >= 1, `200 items in ${batchSizes.length} transactions`);
    t.equal(batchSizes.reduce((a, b) => a + b, 0), 200);

    const committed = await batcher.submit(500).then(async () => {
      const [{ c }] = (await db.sequelize.query('SELECT count(*) AS c FROM r WHERE n = 500', { type: QueryTypes.SELECT })) as { c: number }[];
      return c;
    });
    t.equal(committed, 1, 'visible to a reader as soon as submit resolves');

    const mixed = await Promise.allSettled([batcher.submit(1), batcher.submit(-1), batcher.submit(2)]);
    t.deepEqual(mixed.map((m) => m.status), ['fulfilled', 'rejected', 'fulfilled'], 'only the bad item fails');
    const [{ c }] = (await db.sequelize.query('SELECT count(*) AS c FROM r', { type: QueryTypes.SELECT })) as { c: number }[];
    t.equal(c, 203, 'the good items of the failed batch were committed once each');
  } finally {
    await db.close();
  }
});

test('a failed COMMIT frees the writer: the next write runs (no restart)', async (t) => {
  const dataDir = tmpDir();
  const db = await openDatabase(...withDb(dataDir));
  try {
    await db.sequelize.query('CREATE TABLE parent (id INTEGER PRIMARY KEY)');
    await db.sequelize.query('CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)');
    // A deferred foreign key is checked at COMMIT: the COMMIT itself fails, as on a full disk.
    await rejects(
      t,
      db.writes.run((tx) => db.sequelize.query('INSERT INTO child (id, parent_id) VALUES (1, 42)', { transaction: tx })),
      /FOREIGN KEY|foreign key/,
      'the COMMIT fails',
    );
    await db.writes.run(async (tx) => {
      await db.sequelize.query('INSERT INTO parent (id) VALUES (7)', { transaction: tx });
      await db.sequelize.query('INSERT INTO child (id, parent_id) VALUES (2, 7)', { transaction: tx });
    });
    const rows = (await db.sequelize.query('SELECT id FROM child ORDER BY id', { type: QueryTypes.SELECT })) as { id: number }[];
    t.deepEqual(rows, [{ id: 2 }], 'the next write committed; the failed one left nothing');
    if (onPostgres) return;
    // The connection of a failed COMMIT is closed, not kept: more failures hold no more files open
    // (SQLite may keep one closed connection's file descriptor for reuse: counted from the first failures on).
    const fail = async (from: number, n: number) => {
      for (let i = from; i < from + n; i++) {
        await rejects(t, db.writes.run((tx) => db.sequelize.query(`INSERT INTO child (id, parent_id) VALUES (${i}, 42)`, { transaction: tx })), /FOREIGN KEY/, `failed COMMIT ${i}`);
      }
    };
    await fail(10, 3);
    const before = openFiles(dataDir);
    await fail(20, 10);
    t.equal(openFiles(dataDir), before, `open files of the database: ${before} after three failed COMMITs, as many after ten more`);
  } finally {
    await db.close();
  }
});

test('under writes that never pause, the WAL is checkpointed whole and starts over', async (t) => {
  if (sqliteOnly(t, "the WAL is SQLite's")) return;
  const dir = tmpDir();
  const db = await openDatabase(...withDb(dir));
  try {
    await db.sequelize.query('CREATE TABLE filler (id INTEGER PRIMARY KEY, text TEXT NOT NULL)');
    const text = 'x'.repeat(1000);
    // n rows of text in one statement, text bound once.
    const rowsOf = (n: number) => `INSERT INTO filler (text) WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${n}) SELECT $1 FROM s`;
    const insert = (n: number) => db.writes.run((tx) => db.sequelize.query(rowsOf(n), { bind: [text], transaction: tx }));
    await insert(1);
    const first = walSalt(dir);
    // What one write of 10 rows adds to the WAL (frames of whole pages: more than its ~10 KB of rows).
    const walSize = () => statSync(path.join(dir, `${DB_FILE}-wal`)).size;
    const sizeBefore = walSize();
    await insert(10);
    const perWrite = walSize() - sizeBefore;
    // Two writes queued at every moment for 5 s: the write path is never idle (the checkpoint
    // interval is 1 s). A busy machine writes less in that time and can hold a timer back: the
    // writes go on (up to a minute) until the WAL has started over three times.
    const minEnd = Date.now() + 5000;
    const maxEnd = Date.now() + 60_000;
    let writes = 0;
    const more = () => Date.now() < minEnd || walSalt(dir) - first < 3;
    const writer = async () => {
      while (more() && Date.now() < maxEnd) {
        await insert(10);
        writes++;
      }
    };
    await Promise.all([writer(), writer()]);
    const restarts = walSalt(dir) - first;
    const walBytes = walSize();
    const written = writes * perWrite;
    t.ok(restarts >= 3, `the WAL started over ${restarts} time(s) during ${writes} writes that never paused`);
    // Its size is its high-water mark: the file was written over, it did not take all that went through it.
    t.ok(perWrite > 0 && walBytes < written, `the WAL (${(walBytes / 1e6).toFixed(1)} MB) holds less than went through it (${(written / 1e6).toFixed(1)} MB, ${perWrite} bytes a write)`);
  } finally {
    await db.close();
  }
});
