// The SQLite driver Sequelize is handed (src/db/dialect/sqlite/driver.ts): a statement run on a
// connection already given back gets SQLITE_MISUSE through its callback, as sqlite3 answers a closed
// database, and never throws from inside another callback (which would end the process).
import path from 'node:path';
import test from 'tape';
import { sqliteDriver } from '../../../src/db/dialect/sqlite/driver.ts';
import { tmpDir } from '../../helpers/tmp.ts';

test('a statement on a connection given back: SQLITE_MISUSE to its callback, no throw', async (t) => {
  const driver = sqliteDriver('PRAGMA busy_timeout = 1000;');
  const file = path.join(tmpDir(), 'd.sqlite');
  const Database = driver.module.Database as unknown as new (file: string, mode: number, cb: (err: Error | null) => void) => import('sqlite3').Database;
  let conn!: import('sqlite3').Database;
  await new Promise<void>((resolve, reject) => {
    conn = new Database(file, driver.module.OPEN_READWRITE | driver.module.OPEN_CREATE, (err) => (err ? reject(err) : resolve()));
  });
  const rows = await new Promise<unknown[]>((resolve, reject) => conn.all('SELECT 1 AS one', [], (err, r) => (err ? reject(err) : resolve(r))));
  t.deepEqual(rows, [{ one: 1 }], 'a query while lent');
  await new Promise<void>((resolve) => conn.close(() => resolve()));
  let thrown: unknown = null;
  const err = await new Promise<Error | null>((resolve) => {
    try {
      conn.all('SELECT 1', [], (e) => resolve(e));
    } catch (e) {
      thrown = e;
      resolve(null);
    }
  });
  t.equal(thrown, null, 'no throw');
  t.match(String(err?.message), /SQLITE_MISUSE/, 'SQLITE_MISUSE through the callback');
  await driver.closeAll();
});
