import { QueryTypes, type Model, type ModelStatic, type QueryOptions, type Transaction } from 'sequelize';
import type { Row } from '../contract.ts';

function queryInterface(model: ModelStatic<Model>) {
  const sequelize = model.sequelize;
  if (!sequelize) throw new TypeError(`model ${model.name} is not initialised`);
  return { sequelize, qi: sequelize.getQueryInterface() };
}

/**
 * QueryInterface.bulkInsert builds the dialect's own multi-row INSERT without building a model
 * instance per row, which is most of the cost at a few thousand rows a second.
 */
export async function bulkInsert(model: ModelStatic<Model>, rows: Row[], t: Transaction): Promise<void> {
  if (rows.length === 0) return;
  await queryInterface(model).qi.bulkInsert(model.getTableName(), rows, { transaction: t }, model.getAttributes());
}

/** The query generator's method behind QueryInterface.bulkInsert; its .d.ts does not declare it. */
interface InsertGenerator {
  bulkInsertQuery(table: string, rows: object[], options: object, attributes: object): string;
}

/**
 * One multi-row INSERT built by Sequelize's query generator, with RETURNING id appended (SQLite
 * >= 3.35 takes it; Sequelize's SQLite dialect does not offer it). Ids grow in VALUES order, so
 * sorted ids map back to the rows.
 */
export async function bulkInsertIds(model: ModelStatic<Model>, rows: Row[], t: Transaction): Promise<number[]> {
  if (rows.length === 0) return [];
  const { sequelize, qi } = queryInterface(model);
  const generator = qi.queryGenerator as InsertGenerator;
  const sql = generator.bulkInsertQuery(model.getTableName() as string, rows, {}, model.getAttributes()).replace(/;\s*$/, '');
  // The leading comment is deliberate: Sequelize's SQLite driver runs any SQL starting with
  // "insert into" with sqlite3's run(), which drops the RETURNING rows; with it, all() is used.
  const returned = (await sequelize.query(`/* bulk insert */ ${sql} RETURNING ${qi.quoteIdentifier('id')}`, {
    type: QueryTypes.SELECT,
    transaction: t,
  })) as { id: number }[];
  return returned.map((r) => Number(r.id)).sort((a, b) => a - b);
}

/** INSERT ... ON CONFLICT (conflict) DO UPDATE SET update = excluded.update, as Sequelize's generator writes it. */
export async function upsert(model: ModelStatic<Model>, rows: Row[], conflict: readonly string[], update: readonly string[], t: Transaction): Promise<void> {
  if (rows.length === 0) return;
  const { qi } = queryInterface(model);
  // updateOnDuplicate/upsertKeys reach the query generator but are missing from the QueryOptions type.
  const options: QueryOptions & { updateOnDuplicate: string[]; upsertKeys: string[] } = {
    transaction: t,
    updateOnDuplicate: [...update],
    upsertKeys: [...conflict],
  };
  await qi.bulkInsert(model.getTableName(), rows, options, model.getAttributes());
}
