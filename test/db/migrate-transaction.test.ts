// Each migration runs in a transaction of its own on PostgreSQL, with the row that records it: one
// that fails halfway leaves nothing of itself behind and is not recorded; the ones before it stay.
// On SQLite migrations run outside a transaction (table rebuilds toggle PRAGMA foreign_keys): the
// failed one is not recorded either, and what it did before failing stays (the test shows it).
import { DataTypes, QueryTypes, type Sequelize } from 'sequelize';
import test from 'tape';
import { openDatabase } from '../../src/db/index.ts';
import { MIGRATIONS_TABLE, migrate } from '../../src/db/migrate.ts';
import { migrations } from '../../src/db/migrations/index.ts';
import type { Migration } from '../../src/db/migrations/types.ts';
import { rejects } from '../helpers/assert.ts';
import { onPostgres, withDb } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

const good: Migration = {
  name: '29990101-0001-good',
  async up({ context: qi }) {
    await qi.createTable('mig_good', { id: { type: DataTypes.INTEGER, primaryKey: true } });
    await qi.bulkInsert('mig_good', [{ id: 1 }]);
  },
};

const halfway: Migration = {
  name: '29990101-0002-fails-halfway',
  async up({ context: qi }) {
    await qi.createTable('mig_half', { id: { type: DataTypes.INTEGER, primaryKey: true } });
    await qi.bulkInsert('mig_half', [{ id: 1 }]);
    await qi.addColumn('jobs', 'mig_half_note', { type: DataTypes.STRING(16), allowNull: true });
    // A nested transaction (as a migration may open one): a savepoint inside its own.
    await qi.sequelize.transaction(async (transaction) => {
      await qi.bulkInsert('mig_half', [{ id: 2 }], { transaction });
    });
    await qi.sequelize.query('SELECT no_such_column FROM mig_half');
  },
};

async function tables(sequelize: Sequelize): Promise<string[]> {
  const all = (await sequelize.getQueryInterface().showAllTables()) as unknown[];
  return all.map((t) => (typeof t === 'string' ? t : String((t as { tableName?: string }).tableName)));
}

async function recorded(sequelize: Sequelize): Promise<string[]> {
  const rows = await sequelize.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE} ORDER BY name`, { type: QueryTypes.SELECT });
  return rows.map((r) => r.name);
}

test('a migration that fails halfway: not recorded; on PostgreSQL nothing of it is left, the one before it is', async (t) => {
  const [dir, opts] = withDb(tmpDir());
  const db = await openDatabase(dir, opts);
  try {
    await rejects(t, migrate(db.sequelize, dir, [...migrations, good, halfway]), /no_such_column/, 'the run fails with the migration\'s error');
    const names = await recorded(db.sequelize);
    t.ok(names.includes(good.name), 'the migration before it is recorded');
    t.notOk(names.includes(halfway.name), 'the failed one is not recorded');
    const now = await tables(db.sequelize);
    t.ok(now.includes('mig_good'), 'the migration before it is applied');
    const jobColumns = Object.keys(await db.sequelize.getQueryInterface().describeTable('jobs'));
    if (onPostgres) {
      t.notOk(now.includes('mig_half'), 'PostgreSQL: the table it created is gone');
      t.notOk(jobColumns.includes('mig_half_note'), 'PostgreSQL: the column it added is gone');
    } else {
      t.ok(now.includes('mig_half'), 'SQLite: what it did before failing stays (no transaction per migration)');
      t.ok(jobColumns.includes('mig_half_note'), 'SQLite: the column it added stays');
    }
    t.deepEqual(await migrate(db.sequelize, dir, [...migrations, good]), [], 'nothing pending without it');
  } finally {
    await db.close();
  }
});

test('on PostgreSQL a fixed migration runs again and is recorded once, with all it did', async (t) => {
  const [dir, opts] = withDb(tmpDir());
  const db = await openDatabase(dir, opts);
  try {
    await rejects(t, migrate(db.sequelize, dir, [...migrations, halfway]), /no_such_column/, 'the first run fails');
    if (!onPostgres) {
      t.skip('PostgreSQL only: on SQLite the half-applied migration would need its table dropped by hand before running again');
      return;
    }
    const again: Migration = {
      name: halfway.name,
      async up({ context: qi }) {
        await qi.createTable('mig_half', { id: { type: DataTypes.INTEGER, primaryKey: true } });
        await qi.bulkInsert('mig_half', [{ id: 1 }, { id: 2 }]);
      },
    };
    t.deepEqual(await migrate(db.sequelize, dir, [...migrations, again]), [halfway.name], 'the fixed migration applies (nothing of the failed run is in its way)');
    t.deepEqual((await recorded(db.sequelize)).filter((n) => n === halfway.name), [halfway.name], 'recorded once');
    const rows = await db.sequelize.query<{ id: number }>('SELECT id FROM mig_half ORDER BY id', { type: QueryTypes.SELECT });
    t.deepEqual(rows.map((r) => Number(r.id)), [1, 2], 'with its rows');
  } finally {
    await db.close();
  }
});
