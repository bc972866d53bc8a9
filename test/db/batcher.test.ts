import { QueryTypes } from 'sequelize';
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { onPostgres, withDb } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('batches in flight: up to inFlight transactions at once where the engine has several writers, one at a time on SQLite; every item lands once', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    await db.sequelize.query('CREATE TABLE items (n INTEGER NOT NULL UNIQUE)');
    let running = 0;
    let most = 0;
    const batcher = db.writes.batcher<number, number>(
      async (items, tx) => {
        running++;
        most = Math.max(most, running);
        // Long enough for later submits to start batches of their own while this one is open.
        await new Promise((r) => setTimeout(r, 30));
        await db.sequelize.query(`INSERT INTO items (n) VALUES ${items.map((n) => `(${n})`).join(',')}`, { transaction: tx });
        running--;
        return items;
      },
      { inFlight: 4, maxBatch: 10 },
    );
    const submits: Promise<number>[] = [];
    for (let i = 0; i < 60; i++) {
      submits.push(batcher.submit(i));
      if (i % 10 === 9) await new Promise((r) => setTimeout(r, 5));
    }
    t.deepEqual(await Promise.all(submits), [...Array(60).keys()], 'each submit resolves with its own result');
    const [{ c }] = await db.sequelize.query<{ c: number | string }>('SELECT COUNT(*) AS c FROM items', { type: QueryTypes.SELECT });
    t.equal(Number(c), 60, 'every item committed once');
    if (onPostgres) t.ok(most > 1 && most <= 4, `PostgreSQL: up to 4 batches at once (${most} seen)`);
    else t.equal(most, 1, 'SQLite: one writer, one batch at a time');
    t.equal(db.writes.besideWrites, onPostgres ? 4 : 1, 'the engine says how many writers it takes');
  } finally {
    await db.close();
  }
});
