import { QueryTypes } from 'sequelize';
import { databaseFault } from '../../faults.ts';
import { WritePath } from '../../write-path.ts';
import type { Dialect } from '../contract.ts';
import { bulkInsert, bulkInsertIds, insertRows, insertRowsScript, upsert } from './bulk.ts';
import { checkpointWal, closeSequelize, createSequelize, withWriter } from './connection.ts';

/** SQLite through sqlite3: WAL, one pinned writer connection, RETURNING (>= 3.35) for new ids. */
export const sqliteDialect: Dialect = {
  name: 'sqlite',
  connect: createSequelize,
  close: closeSequelize,
  // One queue, one transaction at a time: the pinned writer connection takes nothing else.
  writePath: (sequelize, dataDir) => new WritePath(sequelize, {
      dataDir,
      checkpoint: () => checkpointWal(sequelize),
      scriptWriter: (fn) => withWriter(sequelize, fn),
    }),
  bulkInsert,
  bulkInsertIds,
  upsert,
  insertRows,
  insertRowsScript,
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
