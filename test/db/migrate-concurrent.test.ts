// Two processes starting at once on a fresh database migrate it once: a lock file in data_dir on
// SQLite, pg_advisory_lock on PostgreSQL. Two openDatabase() calls have separate connections (and
// on PostgreSQL separate sessions), as two processes would.
import { QueryTypes } from 'sequelize';
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { MIGRATIONS_TABLE } from '../../src/db/migrate.ts';
import { MIGRATION_NAMES } from '../../src/db/migrations/names.ts';
import { withDb } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('two opens at once on a fresh database: both succeed, every migration applied once', async (t) => {
  const [dir, opts] = withDb(tmpDir());
  const [a, b] = await Promise.all([openDatabase(dir, opts), openDatabase(dir, opts)]);
  try {
    const rows = await a.sequelize.query<{ name: string; n: number }>(`SELECT name, COUNT(*) AS n FROM ${MIGRATIONS_TABLE} GROUP BY name ORDER BY name`, { type: QueryTypes.SELECT });
    t.deepEqual(rows.map((r) => r.name), [...MIGRATION_NAMES].sort(), 'every migration recorded');
    t.ok(rows.every((r) => Number(r.n) === 1), 'each once');
    await b.ping();
    t.pass('the second open works on the migrated database');
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});
