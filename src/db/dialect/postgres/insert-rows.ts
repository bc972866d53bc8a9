import { QueryTypes, type Model, type ModelStatic, type Transaction } from 'sequelize';
import { tableOf } from '../bulk-insert.ts';
import type { OnConflict, RawValue, Row } from '../contract.ts';
import { insertRowsSql } from './insert-sql.ts';
import { rowsJson, rowsJsonSql } from './json-rows.ts';

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
 * One multi-row INSERT (optionally ... ON CONFLICT DO UPDATE) of rows of values in `columns` order
 * in t: the rows as one JSON parameter read with json_populate_recordset (json-rows.ts), whatever
 * their number; onConflict's where values bound after it.
 */
export async function insertRows(model: ModelStatic<Model>, columns: readonly string[], rows: RawValue[][], t: Transaction, onConflict?: OnConflict): Promise<void> {
  if (rows.length === 0) return;
  const { sequelize, table } = tableOf(model);
  const qi = sequelize.getQueryInterface();
  const sql = rowsJsonSql((c) => qi.quoteIdentifier(c), table, columns, onConflict);
  const bind: RawValue[] = [rowsJson(columns, rows)];
  if (onConflict?.whereValues) bind.push(...onConflict.whereValues);
  await sequelize.query(sql, { bind, transaction: t, type: QueryTypes.RAW });
}
