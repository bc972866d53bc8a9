import type { QueryInterface, Sequelize, Transaction, TransactionOptions } from 'sequelize';
import type { Migration } from '../../migrations/types.ts';

/**
 * A QueryInterface whose every query runs in `transaction` (unless the caller names another), and
 * whose sequelize.transaction() opens a savepoint in it: a migration written without transactions
 * runs whole in one.
 */
function queryInterfaceIn(sequelize: Sequelize, transaction: Transaction): QueryInterface {
  const inTx = Object.create(sequelize) as Sequelize;
  const query = sequelize.query.bind(sequelize) as (sql: unknown, options?: Record<string, unknown>) => Promise<unknown>;
  (inTx as unknown as { query: typeof query }).query = (sql, options) => query(sql, { ...options, transaction: options?.transaction ?? transaction });
  const begin = sequelize.transaction.bind(sequelize) as (options: TransactionOptions, fn?: (t: Transaction) => Promise<unknown>) => Promise<unknown>;
  (inTx as unknown as { transaction: unknown }).transaction = (a?: TransactionOptions | ((t: Transaction) => Promise<unknown>), b?: (t: Transaction) => Promise<unknown>) =>
    typeof a === 'function' ? begin({ transaction }, a) : begin({ ...a, transaction: a?.transaction ?? transaction }, b);
  const qi = sequelize.getQueryInterface() as QueryInterface & { queryGenerator: unknown };
  const Ctor = qi.constructor as new (sequelize: Sequelize, queryGenerator: unknown) => QueryInterface;
  return new Ctor(inTx, qi.queryGenerator);
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
