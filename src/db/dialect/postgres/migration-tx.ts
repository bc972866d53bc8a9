import type { QueryInterface, QueryOptions, Sequelize, Transaction, TransactionOptions } from 'sequelize';
import type { Migration } from '../../migrations/types.ts';

/**
 * A QueryInterface whose every query runs in `transaction` (unless the caller names another), and
 * whose sequelize.transaction() opens a savepoint in it: a migration written without transactions
 * runs whole in one.
 */
function queryInterfaceIn(sequelize: Sequelize, transaction: Transaction): QueryInterface {
  type Query = (sql: string, options?: QueryOptions) => Promise<unknown>;
  type Begin = (a?: TransactionOptions | ((t: Transaction) => Promise<unknown>), b?: (t: Transaction) => Promise<unknown>) => Promise<unknown>;
  const query: Query = (sql, options) => sequelize.query(sql, { ...options, transaction: options?.transaction ?? transaction });
  const begin: Begin = (a, b) =>
    typeof a === 'function' ? sequelize.transaction({ transaction }, a) : sequelize.transaction({ ...a, transaction: a?.transaction ?? transaction }, b!);
  // The instance's own methods, but for these two; the QueryInterface's, but on that instance.
  const inTx: Sequelize = Object.create(sequelize, { query: { value: query }, transaction: { value: begin } });
  return Object.create(sequelize.getQueryInterface(), { sequelize: { value: inTx } });
}

/** Lifts the pool's write bounds (database.lock_timeout_s, ...) for one migration's transaction. */
const LIFT_BOUNDS = 'SET LOCAL lock_timeout = 0; SET LOCAL statement_timeout = 0; SET LOCAL idle_in_transaction_session_timeout = 0';

/**
 * PostgreSQL: each migration runs in a transaction of its own, with the row that records it in
 * `table` (PostgreSQL's DDL is transactional): one that fails halfway leaves nothing of itself
 * behind and is not recorded. umzug's storage then records nothing itself (see recordedInTransaction).
 */
export function inOwnTransactions(sequelize: Sequelize, list: Migration[], table: string): Migration[] {
  return list.map((m) => ({
    name: m.name,
    path: m.path,
    async up() {
      await sequelize.transaction(async (transaction) => {
        // A migration may rewrite a large table and wait for running nodes' locks: the write bounds are not for it.
        await sequelize.query(LIFT_BOUNDS, { transaction });
        await m.up({ name: m.name, path: m.path, context: queryInterfaceIn(sequelize, transaction) });
        await sequelize.query(`INSERT INTO ${table} (name) VALUES (:name)`, { replacements: { name: m.name }, transaction });
      });
    },
    down: m.down,
  }));
}
