// rigd backup on PostgreSQL: the dump holds the capture store (schema rigd_captures); --capture-store
// says so and writes no second file; rigd restore brings the store's rows back.
import { existsSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { connectStore } from '../../src/db/capture-store/postgres-writer.ts';
import { openDatabase } from '../../src/db/index.ts';
import { countRows, openTestStore } from '../helpers/capture-store.ts';
import { rigd } from '../helpers/cli.ts';
import { databaseUrlFor, postgresOnly } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('backup --capture-store on PostgreSQL: the store is in the dump; restore brings its rows back', async (t) => {
  if (postgresOnly(t, 'pg_dump of the PostgreSQL store schema')) return;
  const dataDir = tmpDir();
  const url = databaseUrlFor(dataDir);
  const db = await openDatabase(dataDir, { url }); // migrated, as rigd serve leaves it
  await db.close();
  const store = await openTestStore(dataDir);
  async function* rows() {
    yield { table: 'frames', rows: [[1, 'a'], [2, 'b']], bytes: 2 };
  }
  await store.replace(7, [{ name: 'frames', columns: [{ name: 'id', type: 'INTEGER' }, { name: 'note', type: 'TEXT' }] }], rows());
  await store.close();
  const out = tmpDir();
  const file = path.join(out, 'rigd.dump');
  const second = path.join(out, 'store.sqlite');
  const backup = await rigd(['backup', file, '--capture-store', second], { env: { RIGD_DATA_DIR: dataDir } });
  t.equal(backup.code, 0, backup.stderr);
  t.match(backup.stdout, /--capture-store: on PostgreSQL the capture store is schema rigd_captures of the same database and is in this dump; \S+store\.sqlite was not written\n$/, 'says the store is in the dump');
  t.ok(existsSync(file) && !existsSync(second), 'the dump, and no second file');
  const c = await connectStore(url);
  await c.query('DELETE FROM rigd_captures.frames');
  await c.end();
  t.equal(await countRows(dataDir, 'frames', 7), 0, 'the rows are gone');
  const restore = await rigd(['restore', file], { env: { RIGD_DATA_DIR: dataDir } });
  t.equal(restore.code, 0, restore.stderr);
  t.equal(await countRows(dataDir, 'frames', 7), 2, 'the store rows are back');
});
