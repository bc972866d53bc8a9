import type { Model, ModelStatic, Sequelize, Transaction } from 'sequelize';
import type { Row } from './contract.ts';

/** A model's Sequelize instance and table name. */
export function tableOf(model: ModelStatic<Model>): { sequelize: Sequelize; table: string } {
  const sequelize = model.sequelize;
  if (!sequelize) throw new TypeError(`model ${model.name} is not initialised`);
  return { sequelize, table: model.getTableName() as string };
}

/**
 * One multi-row INSERT of rows into model's table in t, as Sequelize writes it on either engine
 * (QueryInterface.bulkInsert: no model instance per row, which is most of the cost at a few
 * thousand rows a second).
 */
export async function bulkInsert(model: ModelStatic<Model>, rows: Row[], t: Transaction): Promise<void> {
  if (rows.length === 0) return;
  const { sequelize, table } = tableOf(model);
  await sequelize.getQueryInterface().bulkInsert(table, rows, { transaction: t }, model.getAttributes());
}
