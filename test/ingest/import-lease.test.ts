// An import commits only with its run's go-ahead: the store calls beforeCommit inside its transaction
// right before COMMIT (the ingester checks its job lease there; on PostgreSQL with a query on the
// store transaction's own connection). A run that lost its lease (beforeCommit throws) commits
// nothing: the capture's earlier rows stay, on both engines.
import path from 'node:path';
import test from 'tape';
import { LeaseLostError } from '../../src/jobs/errors.ts';
import { importCapture, type ImportOptions } from '../../src/ingest/import.ts';
import { countRows, openTestStore, sqlCapture } from '../helpers/capture-store.ts';
import { onPostgres } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

const dir = tmpDir('rigd-import-lease-');
const dataDir = path.join(dir, 'data');
const OPTS: ImportOptions = { maxBytes: 50 * 1024 * 1024, timeoutMs: 60_000 };

test('beforeCommit runs in the transaction before COMMIT; when it throws nothing is committed', async (t) => {
  const store = await openTestStore(dataDir);
  const small = await sqlCapture(path.join(dir, 'small.sqlite'), 'CREATE TABLE readings (id INTEGER PRIMARY KEY, v TEXT)', "INSERT INTO readings VALUES (1, 'old')");
  const big = await sqlCapture(
    path.join(dir, 'big.sqlite'),
    'CREATE TABLE readings (id INTEGER PRIMARY KEY, v TEXT)',
    "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 5000) INSERT INTO readings SELECT n, 'new' || n FROM s",
  );
  await importCapture(small.path, 1, store, OPTS);
  let seen = -1;
  let called = 0;
  const err = await importCapture(big.path, 1, store, {
    ...OPTS,
    beforeCommit: async (query) => {
      called++;
      if (onPostgres) {
        // The same transaction: it sees the import's uncommitted rows.
        if (!query) throw new Error('no query on PostgreSQL');
        seen = await query('SELECT 1 FROM rigd_captures.readings WHERE capture_id = $1', [1]);
      }
      throw new LeaseLostError();
    },
  }).then(() => undefined, (e: Error) => e);
  t.equal(called, 1, 'called once, before the commit');
  t.ok(err instanceof LeaseLostError, `the import fails with the lost lease (${err?.name}: ${err?.message})`);
  if (onPostgres) t.equal(seen, 5000, "its query runs in the import's transaction (sees the 5000 uncommitted rows)");
  t.equal(await countRows(dataDir, 'readings', 1), 1, "the capture's earlier row, nothing of the run that lost its lease");
  const ok = await importCapture(big.path, 1, store, { ...OPTS, beforeCommit: async () => undefined });
  t.equal(ok[0]!.rows, 5000, 'with the go-ahead it commits');
  t.equal(await countRows(dataDir, 'readings', 1), 5000, 'every row');
  await store.close();
});
