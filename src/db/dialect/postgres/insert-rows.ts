import { QueryTypes, type Model, type ModelStatic, type Transaction } from 'sequelize';
import { tableOf } from '../bulk-insert.ts';
import type { OnConflict, RawValue, Row } from '../contract.ts';
import { insertRowsSql } from './insert-sql.ts';

/** One multi-row INSERT in t with RETURNING id: the new ids, in the order of rows (all rows have the first row's columns). */
export async function bulkInsertIds(model: ModelStatic<Model>, rows: Row[], t: Transaction): Promise<number[]> {
  if (rows.length === 0) return [];
  const { sequelize, table } = tableOf(model);
  const qi = sequelize.getQueryInterface();
  const columns = Object.keys(rows[0]);
  const sql = `${insertRowsSql((c) => qi.quoteIdentifier(c), table, columns, rows.length)} RETURNING ${qi.quoteIdentifier('id')}`;
  const bind = rows.flatMap((r) => columns.map((c) => r[c]));
  const returned = await sequelize.query<{ id: number | string }>(sql, { bind, transaction: t, type: QueryTypes.SELECT });
  // Ids grow in VALUES order: sorted, they map back to the rows.
  return returned.map((r) => Number(r.id)).sort((a, b) => a - b);
}

/**
 * One multi-row INSERT (optionally ... ON CONFLICT DO UPDATE) of rows of values in `columns` order,
 * bound as $n parameters in t; the statement text made once per (table, columns, row count). pg
 * sends Dates as timestamptz text.
 */
export async function insertRows(model: ModelStatic<Model>, columns: readonly string[], rows: RawValue[][], t: Transaction, onConflict?: OnConflict): Promise<void> {
  if (rows.length === 0) return;
  const { sequelize, table } = tableOf(model);
  const qi = sequelize.getQueryInterface();
  const sql = insertRowsSql((c) => qi.quoteIdentifier(c), table, columns, rows.length, onConflict);
  const bind = rows.flat();
  if (onConflict?.whereValues) bind.push(...onConflict.whereValues);
  await sequelize.query(sql, { bind, transaction: t, type: QueryTypes.RAW });
}
