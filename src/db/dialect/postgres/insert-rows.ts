import { QueryTypes, type Model, type ModelStatic, type Transaction } from 'sequelize';
import type { OnConflict, RawValue } from '../contract.ts';

const insertSql = new Map<string, string>();

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
  const table = model.getTableName() as string;
  const key = `${table}|${columns.join(',')}|${rows.length}|${onConflict ? `${onConflict.conflict.join(',')}|${onConflict.update.join(',')}` : ''}`;
  let sql = insertSql.get(key);
  if (!sql) {
    const q = (c: string) => qi.quoteIdentifier(c);
    const width = columns.length;
    const values = rows.map((_, i) => `(${columns.map((_c, j) => `$${i * width + j + 1}`).join(',')})`).join(',');
    sql = `INSERT INTO ${q(table)} (${columns.map(q).join(',')}) VALUES ${values}`;
    if (onConflict) sql += ` ON CONFLICT (${onConflict.conflict.map(q).join(',')}) DO UPDATE SET ${onConflict.update.map((c) => `${q(c)}=excluded.${q(c)}`).join(',')}`;
    insertSql.set(key, sql);
  }
  return sequelize.query(sql, { bind: rows.flat(), transaction: t, type: QueryTypes.RAW }).then(() => undefined);
}
