import { QueryTypes } from 'sequelize';
import { databaseFault } from '../../faults.ts';
import { WritePath } from '../../write-path.ts';
import type { Dialect } from '../contract.ts';
import { bulkInsert } from '../bulk-insert.ts';
import { checkpointWal, closeSequelize, createSequelize, releaseAbandoned } from './connection.ts';
import { bulkInsertIds, insertRows, insertRowsPair } from './insert-rows.ts';

/** SQLite through sqlite3: WAL, one write transaction at a time, its WAL checkpoints off the COMMIT. */
export const sqliteDialect: Dialect = {
  name: 'sqlite',
  rowLocks: false,
  sharedByNodes: false,
  connect: createSequelize,
  close: closeSequelize,
  // One queue, one transaction at a time: SQLite takes one writer.
  writePath: (sequelize, dataDir) =>
    new WritePath(sequelize, {
      dataDir,
      checkpoint: () => checkpointWal(sequelize),
      afterFailure: () => releaseAbandoned(sequelize),
    }),
  bulkInsert,
  bulkInsertIds,
  insertRows,
  insertRowsPair,
  async ping(sequelize) {
    await sequelize.query('SELECT 1');
  },
  async probeWrite(sequelize, transaction) {
    // The header field user_version, set to its own value.
    const row = await sequelize.query<{ user_version: number }>('PRAGMA user_version', { type: QueryTypes.SELECT, transaction, plain: true });
    await sequelize.query(`PRAGMA user_version = ${Number(row?.user_version ?? 0)}`, { transaction });
  },
  fault: databaseFault,
};
