import { QueryTypes, type Model, type ModelStatic, type Transaction } from 'sequelize';
import type { OnConflict, RawValue } from '../contract.ts';
import { insertRowsSql } from '../insert-sql.ts';

/**
 * One multi-row INSERT (optionally ... ON CONFLICT DO UPDATE) of rows of values in `columns` order,
 * bound as $n parameters through the transaction's client; the statement text made once per (table,
 * columns, row count). pg sends Dates as timestamptz text. Statements of one transaction queue on its
 * client in the order they were issued, so a caller may issue several and await them together.
 */
export function insertRows(model: ModelStatic<Model>, columns: readonly string[], rows: RawValue[][], t: Transaction, onConflict?: OnConflict): Promise<void> {
  if (rows.length === 0) return Promise.resolve();
  const sequelize = model.sequelize;
  if (!sequelize) return Promise.reject(new TypeError(`model ${model.name} is not initialised`));
  const qi = sequelize.getQueryInterface();
  const sql = insertRowsSql((c) => qi.quoteIdentifier(c), (n) => `$${n}`, model.getTableName() as string, columns, rows.length, onConflict);
  return sequelize.query(sql, { bind: rows.flat(), transaction: t, type: QueryTypes.RAW }).then(() => undefined);
}
