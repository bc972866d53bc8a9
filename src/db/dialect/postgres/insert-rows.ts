import { QueryTypes, type Model, type ModelStatic, type Transaction } from 'sequelize';
import { tableOf } from '../bulk-insert.ts';
import type { OnConflict, RawValue, Row, RowsInsert } from '../contract.ts';
import { insertRowsSql } from './insert-sql.ts';
import { pairJsonSql, rowsJson, rowsJsonSql } from './json-rows.ts';

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

/**
 * Two insertRows in t as one statement: first's INSERT in a WITH, then's as the statement itself
 * (its foreign keys are checked at the statement's end, when first's rows are there). One round
 * trip and one query through Sequelize instead of two. Either without rows: insertRows alone.
 */
export async function insertRowsPair(first: RowsInsert, then: RowsInsert, t: Transaction): Promise<void> {
  if (first.rows.length === 0 || then.rows.length === 0) {
    await insertRows(first.model, first.columns, first.rows, t, first.onConflict);
    await insertRows(then.model, then.columns, then.rows, t, then.onConflict);
    return;
  }
  const { sequelize, table } = tableOf(first.model);
  const qi = sequelize.getQueryInterface();
  const sql = pairJsonSql((c) => qi.quoteIdentifier(c), { table, columns: first.columns, onConflict: first.onConflict }, { table: tableOf(then.model).table, columns: then.columns, onConflict: then.onConflict });
  const bind: RawValue[] = [rowsJson(first.columns, first.rows), rowsJson(then.columns, then.rows)];
  bind.push(...(first.onConflict?.whereValues ?? []), ...(then.onConflict?.whereValues ?? []));
  await sequelize.query(sql, { bind, transaction: t, type: QueryTypes.RAW });
}
