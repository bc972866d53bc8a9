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

test('batches in flight with keyOf: one key is never in two open batches; its items commit in the order submitted; other keys still overlap', async (t) => {
  const db = await openDatabase(...withDb(tmpDir()));
  try {
    await db.sequelize.query('CREATE TABLE keyed (n INTEGER NOT NULL UNIQUE, k TEXT NOT NULL)');
    const open = new Map<string, number>();
    let clashes = 0;
    let running = 0;
    let most = 0;
    const committed: { k: string; n: number }[] = [];
    let overlapped!: () => void;
    const twoOpen = new Promise<void>((resolve) => (overlapped = resolve));
    const giveUp = setTimeout(() => overlapped(), 60_000).unref();
    let allIn!: () => void;
    const submitted = new Promise<void>((resolve) => (allIn = resolve));
    type Item = { k: string; n: number };
    const batcher = db.writes.batcher<Item, number>(
      async (items, tx) => {
        const keys = new Set(items.map((i) => i.k));
        for (const k of keys) {
          if (open.has(k)) clashes++;
          open.set(k, 1);
        }
        running++;
        most = Math.max(most, running);
        if (running > 1) overlapped();
        // Held until two batches are open at once and every item is submitted (PostgreSQL): a batch
        // that took a key held by another open batch would be seen here.
        await (onPostgres ? Promise.all([twoOpen, submitted]) : new Promise((r) => setTimeout(r, 30)));
        await db.sequelize.query(`INSERT INTO keyed (n, k) VALUES ${items.map((i) => `(${i.n}, '${i.k}')`).join(',')}`, { transaction: tx });
        running--;
        for (const k of keys) open.delete(k);
        committed.push(...items);
        return items.map((i) => i.n);
      },
      { inFlight: 4, maxBatch: 10, keyOf: (i) => i.k },
    );
    const submits: Promise<number>[] = [];
    // Ten of key a fill a batch; ten of b go beside it; then a and b again, which must wait.
    for (const [g, k] of ['a', 'b', 'a', 'b'].entries()) {
      for (let i = 0; i < 10; i++) submits.push(batcher.submit({ k, n: g * 10 + i }));
      await new Promise((r) => setTimeout(r, 5));
    }
    allIn();
    t.deepEqual(await Promise.all(submits), [...Array(40).keys()], 'each submit resolves with its own result');
    clearTimeout(giveUp);
    t.equal(clashes, 0, 'no key was in two open batches at once');
    for (const k of ['a', 'b']) {
      const order = committed.filter((i) => i.k === k).map((i) => i.n);
      t.deepEqual(order, [...order].sort((x, y) => x - y), `key ${k}: committed in the order submitted`);
    }
    const [{ c }] = await db.sequelize.query<{ c: number | string }>('SELECT COUNT(*) AS c FROM keyed', { type: QueryTypes.SELECT });
    t.equal(Number(c), 40, 'every item committed once');
    if (onPostgres) t.ok(most > 1, `PostgreSQL: batches of other keys still open beside each other (${most} at most)`);
    else t.equal(most, 1, 'SQLite: one batch at a time');
  } finally {
    await db.close();
  }
});
