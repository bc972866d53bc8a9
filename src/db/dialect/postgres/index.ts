import { QueryTypes } from 'sequelize';
import { postgresFault } from '../../faults.ts';
import { MIGRATIONS_TABLE } from '../../migrate.ts';
import { WritePath } from '../../write-path.ts';
import type { Dialect } from '../contract.ts';
// Sequelize's query generator writes the same multi-row INSERT, RETURNING and ON CONFLICT on both engines.
import { bulkInsert, bulkInsertIds, upsert } from '../sqlite/bulk.ts';
import { closeSequelize, createSequelize } from './connection.ts';
import { insertRows } from './insert-rows.ts';

/** Write transactions that may commit at once beside the others (report batches); the pool holds 10. */
export const BESIDE_WRITES = 4;

/**
 * PostgreSQL (>= 13) through pg: a pool of connections. Writes go through the same write path as
 * on SQLite (one transaction at a time, group commit of small writes), except rig report batches:
 * up to BESIDE_WRITES of them commit at once, each on a connection of its own (bench/engines.ts).
 */
export const postgresDialect: Dialect = {
  name: 'postgres',
  connect(_dataDir, opts = {}) {
    if (!opts.url) throw new TypeError('the postgres dialect needs database.url');
    return createSequelize(opts.url, opts);
  },
  close: closeSequelize,
  writePath: (sequelize) => new WritePath(sequelize, { besideWrites: BESIDE_WRITES }),
  bulkInsert,
  bulkInsertIds,
  upsert,
  insertRows,
  async ping(sequelize) {
    await sequelize.query('SELECT 1');
  },
  async probeWrite(sequelize, transaction) {
    // One row of umzug's table written with its own value: a new row version, so a standby or a
    // read-only transaction refuses it (25006) and a full disk fails it (53100).
    await sequelize.query(`UPDATE ${MIGRATIONS_TABLE} SET name = name WHERE name = (SELECT min(name) FROM ${MIGRATIONS_TABLE})`, { transaction, type: QueryTypes.UPDATE });
  },
  fault: (err) => postgresFault(err),
};
