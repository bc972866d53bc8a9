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
    // Where the engine has several writers, each batch stays open until two are open at once (or
    // for 60 s, when the batcher never opens a second one): later submits start batches of their own
    // however slowly a loaded machine opens them. On SQLite, a batch open for a while lets them try.
    let overlapped!: () => void;
    const twoOpen = new Promise<void>((resolve) => (overlapped = resolve));
    const giveUp = setTimeout(() => overlapped(), 60_000).unref();
    const batcher = db.writes.batcher<number, number>(
      async (items, tx) => {
        running++;
        most = Math.max(most, running);
        if (running > 1) overlapped();
        await (onPostgres ? twoOpen : new Promise((r) => setTimeout(r, 30)));
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
    clearTimeout(giveUp);
    const [{ c }] = await db.sequelize.query<{ c: number | string }>('SELECT COUNT(*) AS c FROM items', { type: QueryTypes.SELECT });
    t.equal(Number(c), 60, 'every item committed once');
    if (onPostgres) t.ok(most > 1 && most <= 4, `PostgreSQL: up to 4 batches at once (${most} seen)`);
    else t.equal(most, 1, 'SQLite: one writer, one batch at a time');
    t.equal(db.writes.besideWrites, onPostgres ? 4 : 1, 'the engine says how many writers it takes');
  } finally {
    await db.close();
  }
});
