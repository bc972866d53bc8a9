import { QueryTypes } from 'sequelize';
import { postgresFault } from '../../faults.ts';
import { MIGRATIONS_TABLE } from '../../migrate.ts';
import { WritePath } from '../../write-path.ts';
import type { Dialect } from '../contract.ts';
import { bulkInsert } from '../bulk-insert.ts';
import { boundsAtStartup, closeSequelize, createSequelize, settingsOf, writeBoundsSql } from './connection.ts';
import { bulkInsertIds, insertRows, insertRowsPair } from './insert-rows.ts';

/** Write transactions that may commit at once beside the others (report batches); the pool holds 10 by default. */
export const BESIDE_WRITES = 4;

/** Report batches at once for a pool of poolMax: one connection stays for the other writes and reads. */
export function besideWrites(poolMax: number): number {
  return Math.max(1, Math.min(BESIDE_WRITES, poolMax - 1));
}

/**
 * PostgreSQL (>= 13) through pg: a pool of connections. Writes go through the same write path as
 * on SQLite (one transaction at a time, group commit of small writes), except rig report batches:
 * up to BESIDE_WRITES of them commit at once, each on a connection of its own (bench/engines.ts).
 * Every write transaction runs under database.lock_timeout_s, statement_timeout_s and
 * idle_in_transaction_timeout_s: session settings of each pooled connection, or SET LOCAL in each
 * write transaction through a pooler (connection.ts boundsAtStartup).
 */
export const postgresDialect: Dialect = {
  name: 'postgres',
  rowLocks: true,
  sharedByNodes: true,
  connect(_dataDir, opts = {}) {
    if (!opts.url) throw new TypeError('the postgres dialect needs database.url');
    return createSequelize(opts.url, opts);
  },
  close: closeSequelize,
  writePath(sequelize) {
    const settings = settingsOf(sequelize);
    if (boundsAtStartup(settings)) return new WritePath(sequelize, { besideWrites: besideWrites(settings.pool_max) });
    // Through a pooler every write transaction first bounds its lock waits, statements and idle time (one round trip).
    const bounds = writeBoundsSql(settings);
    return new WritePath(sequelize, { besideWrites: besideWrites(settings.pool_max), begin: (transaction) => sequelize.query(bounds, { transaction }).then(() => undefined) });
  },
  bulkInsert,
  bulkInsertIds,
  insertRows,
  insertRowsPair,
  async ping(sequelize) {
    await sequelize.query('SELECT 1');
  },
  async probeWrite(sequelize, transaction) {
    // The lock every rig report takes on rigs, under the write's lock_timeout: a table another
    // session locks against writers makes the probe fail as the reports do (55P03 database_busy).
    await sequelize.query('LOCK TABLE rigs IN ROW EXCLUSIVE MODE', { transaction });
    // One row of umzug's table written with its own value: a new row version, so a standby or a
    // read-only transaction refuses it (25006) and a full disk fails it (53100).
    await sequelize.query(`UPDATE ${MIGRATIONS_TABLE} SET name = name WHERE name = (SELECT min(name) FROM ${MIGRATIONS_TABLE})`, { transaction, type: QueryTypes.UPDATE });
  },
  fault: (err) => postgresFault(err),
};
