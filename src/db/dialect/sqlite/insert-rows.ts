import { QueryTypes, type Model, type ModelStatic, type Transaction } from 'sequelize';
import { tableOf } from '../bulk-insert.ts';
import type { OnConflict, RawValue, Row, RowsInsert } from '../contract.ts';
import { dateText, rowsJson, rowsSql } from './json-rows.ts';

/**
 * One multi-row INSERT in t, resolving to the new ids in the order of rows. Sequelize answers an
 * INSERT on SQLite with the last row's id; the rows of one INSERT take consecutive ids (the same
 * reading Sequelize's own bulkCreate makes), and t holds the write lock throughout.
 */
export async function bulkInsertIds(model: ModelStatic<Model>, rows: Row[], t: Transaction): Promise<number[]> {
  if (rows.length === 0) return [];
  const { sequelize, table } = tableOf(model);
  const last = Number(await sequelize.getQueryInterface().bulkInsert(table, rows, { transaction: t }, model.getAttributes()));
  if (!Number.isSafeInteger(last)) throw new TypeError(`the insert into ${table} returned no id`);
  return rows.map((_r, i) => last - rows.length + 1 + i);
}

/**
 * One multi-row INSERT (optionally ... ON CONFLICT DO UPDATE) of rows of values in `columns` order
 * in t: the rows as one JSON parameter read with json_each (json-rows.ts), whatever their number.
 * Dates are written as Sequelize writes them.
 */
export async function insertRows(model: ModelStatic<Model>, columns: readonly string[], rows: RawValue[][], t: Transaction, onConflict?: OnConflict): Promise<void> {
  if (rows.length === 0) return;
  const { sequelize, table } = tableOf(model);
  const qi = sequelize.getQueryInterface();
  const { json, fractions } = rowsJson(rows, columns.length);
  const sql = rowsSql((c) => qi.quoteIdentifier(c), table, columns, fractions, onConflict);
  const bind: (string | number | null)[] = [json];
  for (const v of onConflict?.whereValues ?? []) bind.push(v instanceof Date ? dateText(v) : v);
  await sequelize.query(sql, { bind, transaction: t, type: QueryTypes.INSERT });
}

/** Two insertRows in t, issued together: the connection runs them in this order. */
export async function insertRowsPair(first: RowsInsert, then: RowsInsert, t: Transaction): Promise<void> {
  await Promise.all([insertRows(first.model, first.columns, first.rows, t, first.onConflict), insertRows(then.model, then.columns, then.rows, t, then.onConflict)]);
}
